import { canonicalize } from './canonical-json.js';
import { WorkflowError } from './errors.js';
import { checkSchema } from './internal/schema-check.js';
import { manifest as manifestValidator } from './generated/validators.js';
import { listSteps } from './internal/walk.js';
import { emptyObject, quoteName, toPointer, type JsonObject, type JsonValue } from './json-value.js';
import { applyCustomization, MANIFEST_OPS, type Customization, type ManifestOp } from './manifest-apply.js';
import { parseManifestPath } from './manifest-path.js';
import { parseResourcePath } from './resource-path.js';
import { DEFAULT_RESOURCE_DIRS, prepareRoots, resolveFile } from './resource-resolver.js';
import { MAX_JSON_BYTES } from './strict-json.js';
import type { WorkflowFile } from './types.js';
import { readInput, validateWorkflow } from './validate-workflow.js';

/** Default cap on `includes[]` entries (S107). */
export const MAX_MANIFEST_INCLUDES = 32;
/** Default cap on `customizations[]` entries per include. */
export const MAX_MANIFEST_CUSTOMIZATIONS = 256;

const validateManifest = () => manifestValidator;

/** Options of {@link buildWorkflows}. */
export interface BuildWorkflowsOptions {
  /** Directories searched, in order, for each `sourceWorkflow`. Default: the resource directories. */
  workflowDirs?: readonly string[];
  /** Cap on the number of includes. Default {@link MAX_MANIFEST_INCLUDES}. */
  maxIncludes?: number;
  /** Cap on customisations per include. Default {@link MAX_MANIFEST_CUSTOMIZATIONS}. */
  maxCustomizations?: number;
  /** Cap on the manifest and on each included workflow file, in bytes. Default 8 MiB. */
  maxInputBytes?: number;
}

/** One include as it was resolved. */
export interface BuiltInclude {
  sourceWorkflow: string;
  dir: string;
}

/** Result of {@link buildWorkflows}: a source workflow, ready for `compileWorkflow`. */
export interface BuildWorkflowsResult {
  workflow: WorkflowFile;
  includes: BuiltInclude[];
}

interface PlannedInclude {
  sourceWorkflow: string;
  customizations: Customization[];
}

/**
 * Builds one workflow file from a manifest (SPEC.md §7): reads every `sourceWorkflow` through the same safe
 * resolver as resources, applies its customisations in order, concatenates the `workflows[]` of all includes,
 * and validates the result. Every path and op is checked before any file is read.
 *
 * @throws WorkflowError `WORKFLOW_JSON_*`; `WORKFLOW_VALUE_INVALID`; `WORKFLOW_MANIFEST_INVALID`;
 *   `WORKFLOW_MANIFEST_TOO_MANY_INCLUDES`; `WORKFLOW_MANIFEST_DUPLICATE_INCLUDE`; `WORKFLOW_MANIFEST_OP_UNKNOWN`;
 *   `WORKFLOW_MANIFEST_PATH_INVALID`; `WORKFLOW_MANIFEST_PATH_NOT_FOUND`; `WORKFLOW_MANIFEST_OP_INVALID`;
 *   `WORKFLOW_MANIFEST_CONFLICT`; `WORKFLOW_RESOURCE_*` for include files; `WORKFLOW_SCHEMA_INVALID` and
 *   `WORKFLOW_DUPLICATE_STEP_ID` for an included or the combined workflow — as a rejected promise.
 */
export function buildWorkflows(
  manifest: unknown,
  options: BuildWorkflowsOptions = {},
): Promise<BuildWorkflowsResult> {
  // Include files are read synchronously, as resources are (ADR 0014).
  return new Promise((resolve) => resolve(buildNow(manifest, options)));
}

function buildNow(manifest: unknown, options: BuildWorkflowsOptions): BuildWorkflowsResult {
  const maxBytes = options.maxInputBytes ?? MAX_JSON_BYTES;
  const plan = planManifest(readInput(manifest, { maxBytes }), options);
  const roots = prepareRoots(options.workflowDirs ?? DEFAULT_RESOURCE_DIRS);
  const files: JsonObject[] = [];
  const includes: BuiltInclude[] = [];
  const realPaths = new Map<string, number>();
  for (const [i, inc] of plan.entries()) {
    const file = resolveFile(inc.sourceWorkflow, roots, maxBytes);
    const first = realPaths.get(file.realPath);
    if (first !== undefined) throw duplicate(i, first, 'is the same file');
    realPaths.set(file.realPath, i);
    files.push(customise(file.bytes, inc, i, maxBytes));
    includes.push({ sourceWorkflow: file.path, dir: file.dir });
  }
  checkIncludeStepIds(files);
  const combined = combine(files);
  return { workflow: validateWorkflow(combined), includes };
}

function planManifest(value: JsonValue, options: BuildWorkflowsOptions): PlannedInclude[] {
  checkSchema(validateManifest, value, 'WORKFLOW_MANIFEST_INVALID', 'manifest');
  const includes = (value as JsonObject)['includes'] as JsonObject[];
  const maxIncludes = options.maxIncludes ?? MAX_MANIFEST_INCLUDES;
  if (includes.length > maxIncludes) {
    throw new WorkflowError(
      'WORKFLOW_MANIFEST_TOO_MANY_INCLUDES',
      `manifest has ${includes.length} includes; the cap is ${maxIncludes}`,
    );
  }
  const seen = new Map<string, number>();
  return includes.map((inc, i) => {
    const sourceWorkflow = inc['sourceWorkflow'] as string;
    const key = foldName(sourceWorkflow);
    const first = seen.get(key);
    if (first !== undefined)
      throw duplicate(i, first, 'names the same file (after case folding and Unicode normalisation)');
    seen.set(key, i);
    const list = (inc['customizations'] ?? []) as JsonObject[];
    const maxCustomizations = options.maxCustomizations ?? MAX_MANIFEST_CUSTOMIZATIONS;
    if (list.length > maxCustomizations) {
      throw new WorkflowError(
        'WORKFLOW_MANIFEST_INVALID',
        `include ${i} has more than ${maxCustomizations} customizations`,
      );
    }
    return { sourceWorkflow, customizations: list.map((c, j) => planCustomization(c, i, j)) };
  });
}

/** S105: `App.js`/`app.js`, NFC/NFD variants and `/x` vs `x` all name one include. */
function foldName(path: string): string {
  return `/${parseResourcePath(path).join('/')}`
    .normalize('NFKC')
    .toUpperCase()
    .toLowerCase()
    .normalize('NFKC');
}

function planCustomization(c: JsonObject, i: number, j: number): Customization {
  const where = `includes[${i}].customizations[${j}]`;
  const op = c['op'] as string;
  if (!(MANIFEST_OPS as readonly string[]).includes(op)) {
    throw new WorkflowError(
      'WORKFLOW_MANIFEST_OP_UNKNOWN',
      `manifest ${where}: unknown op ${quoteName(op)}; expected value, add or delete`,
      {
        details: { errors: [{ pointer: `/includes/${i}/customizations/${j}/op`, detail: 'unknown op' }] },
      },
    );
  }
  let segments;
  try {
    segments = parseManifestPath(c['sourcePath'] as string);
  } catch (err) {
    throw new WorkflowError(
      'WORKFLOW_MANIFEST_PATH_INVALID',
      `manifest ${where}: ${(err as Error).message}`,
      { cause: err },
    );
  }
  const out: Customization = { op: op as ManifestOp, segments, where };
  if (c['sourceValue'] !== undefined) out.value = c['sourceValue'];
  return out;
}

function customise(bytes: Uint8Array, inc: PlannedInclude, i: number, maxBytes: number): JsonObject {
  const doc = withInclude(i, inc.sourceWorkflow, () =>
    validateWorkflow(bytes, { maxBytes }),
  ) as unknown as JsonObject;
  for (const c of inc.customizations) applyCustomization(doc, c);
  return withInclude(i, inc.sourceWorkflow, () => validateWorkflow(doc)) as unknown as JsonObject;
}

function withInclude<T>(i: number, name: string, fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (!(err instanceof WorkflowError)) throw err;
    throw new WorkflowError(err.code, `include ${i} (${quoteName(name)}): ${err.message}`, {
      cause: err,
      details: err.details,
    });
  }
}

/**
 * A file may reuse a `stepId` in another of its workflows (ADR 0060), but two includes may not share one: the
 * combination is new, and a shared id there is far more likely a clash than a choice (SPEC.md §7.3).
 */
function checkIncludeStepIds(files: JsonObject[]): void {
  const owner = new Map<string, number>();
  files.forEach((file, i) => {
    for (const { step, at } of listSteps(file)) {
      const id = step['stepId'] as string;
      const first = owner.get(id);
      if (first === undefined) owner.set(id, i);
      else if (first !== i) {
        throw new WorkflowError(
          'WORKFLOW_DUPLICATE_STEP_ID',
          `includes ${first} and ${i} both define stepId ${quoteName(id)}`,
          {
            details: {
              errors: [
                {
                  pointer: `/includes/${i}`,
                  detail: `${quoteName(id)} at ${toPointer(at)} is also in include ${first}`,
                },
              ],
            },
          },
        );
      }
    }
  });
}

/** Concatenates `workflows[]`; any other top-level member must be equal wherever it appears (SPEC.md §7.3). */
function combine(files: JsonObject[]): JsonObject {
  const out = emptyObject();
  const workflows: JsonValue[] = [];
  const origin = new Map<string, { index: number; canonical: string }>();
  files.forEach((file, i) => {
    for (const key of Object.keys(file)) {
      if (key === 'workflows') workflows.push(...(file[key] as JsonValue[]));
      else if (key !== 'comment') mergeTopLevel(out, origin, file, key, i);
    }
  });
  out['workflows'] = workflows;
  return out;
}

function mergeTopLevel(
  out: JsonObject,
  origin: Map<string, { index: number; canonical: string }>,
  file: JsonObject,
  key: string,
  i: number,
): void {
  const canonical = canonicalize(file[key]);
  const first = origin.get(key);
  if (first === undefined) {
    origin.set(key, { index: i, canonical });
    out[key] = file[key] as JsonValue;
  } else if (first.canonical !== canonical) {
    throw new WorkflowError(
      'WORKFLOW_MANIFEST_CONFLICT',
      `includes ${first.index} and ${i} both set top-level ${quoteName(key)} to different values`,
      {
        details: {
          errors: [{ pointer: `/${key}`, detail: `differs between includes ${first.index} and ${i}` }],
        },
      },
    );
  }
}

function duplicate(i: number, first: number, why: string): WorkflowError {
  return new WorkflowError('WORKFLOW_MANIFEST_DUPLICATE_INCLUDE', `include ${i} ${why} as include ${first}`, {
    details: {
      errors: [{ pointer: `/includes/${i}/sourceWorkflow`, detail: `${why} as /includes/${first}` }],
    },
  });
}
