import {
  buildWorkflows,
  compileWorkflow,
  hashWorkflow,
  WORKFLOW_HASH_ALGORITHM,
} from '@org/workflow-compiler';
import type { AppDeps } from '../deps.js';
import { JSON_TYPE, negotiate } from '../negotiate.js';
import { sendJson, type TableHandler } from '../plain-http.js';
import { readJsonDocument, uploadOptionsFor } from '../upload.js';

function compileOptions(deps: AppDeps) {
  return { resourceDirs: deps.resourceDirs, maxInputBytes: deps.limits.workflowBytes };
}

/** POST /workflow-compile: workflow JSON → `{ok, workflow, resources}` (resource paths and sizes, no directories). */
export function workflowCompile(deps: AppDeps): TableHandler {
  const options = uploadOptionsFor(deps.uploads, '/workflow-compile');
  return async (req, res) => {
    negotiate(req, [JSON_TYPE]);
    const source = await readJsonDocument(req, options);
    const { workflow, resources } = await compileWorkflow(source, compileOptions(deps));
    sendJson(res, {
      ok: true,
      workflow,
      resources: resources.map((r) => ({ path: r.path, bytes: r.bytes, references: r.references })),
    });
  };
}

/** POST /workflow-hash: workflow JSON → `{ok, hash, algorithm}` of the compiled workflow. */
export function workflowHash(deps: AppDeps): TableHandler {
  const options = uploadOptionsFor(deps.uploads, '/workflow-hash');
  return async (req, res) => {
    negotiate(req, [JSON_TYPE]);
    const source = await readJsonDocument(req, options);
    const { workflow } = await compileWorkflow(source, compileOptions(deps));
    sendJson(res, { ok: true, hash: hashWorkflow(workflow), algorithm: WORKFLOW_HASH_ALGORITHM });
  };
}

/** POST /build-workflows: manifest JSON → `{ok, workflow}` (source files looked up in the resource dirs). */
export function buildWorkflowsRoute(deps: AppDeps): TableHandler {
  const options = uploadOptionsFor(deps.uploads, '/build-workflows');
  return async (req, res) => {
    negotiate(req, [JSON_TYPE]);
    const manifest = await readJsonDocument(req, options);
    const { workflow } = await buildWorkflows(manifest, {
      workflowDirs: deps.resourceDirs,
      maxInputBytes: deps.limits.workflowBytes,
    });
    sendJson(res, { ok: true, workflow });
  };
}
