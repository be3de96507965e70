import {
  buildWorkflows,
  compileWorkflow,
  hashWorkflow,
  WORKFLOW_HASH_ALGORITHM,
} from '@org/workflow-compiler';
import { jsonResult } from '../internal/json-result.js';
import type { OperationEnv, OperationResult } from '../operation.js';

type CompileEnv = Pick<OperationEnv, 'limits' | 'resourceDirs'>;

/** workflow-compile: workflow JSON → `{ok, workflow, resources}` (resource paths and sizes, no directories). */
export async function workflowCompile(source: Uint8Array, env: CompileEnv): Promise<OperationResult> {
  const { workflow, resources } = await compileWorkflow(source, {
    resourceDirs: env.resourceDirs,
    maxInputBytes: env.limits.workflowBytes,
  });
  return jsonResult({
    ok: true,
    workflow,
    resources: resources.map((r) => ({ path: r.path, bytes: r.bytes, references: r.references })),
  });
}

/** workflow-hash: workflow JSON → `{ok, hash, algorithm}` of the compiled workflow. */
export async function workflowHash(source: Uint8Array, env: CompileEnv): Promise<OperationResult> {
  const { workflow } = await compileWorkflow(source, {
    resourceDirs: env.resourceDirs,
    maxInputBytes: env.limits.workflowBytes,
  });
  return jsonResult({ ok: true, hash: hashWorkflow(workflow), algorithm: WORKFLOW_HASH_ALGORITHM });
}

/**
 * build-workflows: manifest JSON → `{ok, workflow}`. Source workflow files are looked up in the resource
 * directories, then in the workflow source directories.
 */
export async function buildWorkflowsFromManifest(
  manifest: Uint8Array,
  env: Pick<OperationEnv, 'limits' | 'resourceDirs' | 'workflowSourceDirs'>,
): Promise<OperationResult> {
  const workflowDirs =
    env.workflowSourceDirs.length === 0 ? env.resourceDirs : [...env.resourceDirs, ...env.workflowSourceDirs];
  const { workflow } = await buildWorkflows(manifest, {
    workflowDirs,
    maxInputBytes: env.limits.workflowBytes,
  });
  return jsonResult({ ok: true, workflow });
}
