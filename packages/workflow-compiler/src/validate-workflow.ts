import { throwDetails, checkSchema } from './internal/schema-check.js';
import { workflow as workflowValidator } from './generated/validators.js';
import { forEachProcessor } from './internal/walk.js';
import {
  hasKey,
  isJsonObject,
  toJsonValue,
  toPointer,
  type JsonObject,
  type JsonValue,
} from './json-value.js';
import { parseStrictJson, type ParseStrictJsonOptions } from './strict-json.js';
import type { WorkflowErrorDetail } from './errors.js';
import type { WorkflowFile } from './types.js';

const validateSchema = () => workflowValidator;

/** Options of {@link validateWorkflow}. */
export type ValidateWorkflowOptions = ParseStrictJsonOptions;

/**
 * Reads a workflow file (bytes, JSON text, or an already parsed value) and checks it against
 * `WORKFLOW_SCHEMA` and the rules the schema cannot state: each processor has exactly one of `script`,
 * `resource`, `processors` (`script: null` and `resource: ""` count as absent); `resourceName` only beside a
 * `script`; `stepId` unique within each workflow (two workflows of one file may use the same id, ADR 0060).
 * Returns the value in this package's JSON form (objects that inherit nothing).
 *
 * @throws WorkflowError syntax codes `WORKFLOW_JSON_*` (from the strict parser; `WORKFLOW_VALUE_INVALID` for a
 *   non-JSON value); `WORKFLOW_SCHEMA_INVALID` with every violation in `details.errors` as `{ pointer, detail }`;
 *   `WORKFLOW_DUPLICATE_STEP_ID`.
 */
export function validateWorkflow(input: unknown, options: ValidateWorkflowOptions = {}): WorkflowFile {
  const value = readInput(input, options);
  checkSchema(validateSchema, value, 'WORKFLOW_SCHEMA_INVALID', 'workflow');
  const file = value as JsonObject;
  const forms = processorFormIssues(file);
  if (forms.length > 0) throwDetails('WORKFLOW_SCHEMA_INVALID', 'workflow', forms);
  checkUniqueStepIds(file);
  return file as unknown as WorkflowFile;
}

/** Bytes and strings are parsed strictly; any other value is copied into this package's JSON form. */
export function readInput(input: unknown, options: ParseStrictJsonOptions): JsonValue {
  if (typeof input === 'string' || input instanceof Uint8Array) return parseStrictJson(input, options);
  return toJsonValue(input);
}

function processorFormIssues(file: JsonObject): WorkflowErrorDetail[] {
  const issues: WorkflowErrorDetail[] = [];
  forEachProcessor(file, (p, at) => {
    const hasScript = typeof p['script'] === 'string';
    const forms = Number(hasScript) + Number(hasResource(p)) + Number(hasKey(p, 'processors'));
    if (forms !== 1) {
      issues.push({
        pointer: toPointer(at()),
        detail: `a processor needs exactly one of script, resource, processors; found ${forms}`,
      });
    }
    if (hasKey(p, 'resourceName') && !hasScript) {
      issues.push({
        pointer: toPointer([...at(), 'resourceName']),
        detail: 'resourceName is only allowed beside script',
      });
    }
  });
  return issues;
}

/** A `resource` member that names something: `"resource": ""` counts as absent (existing apps write it). */
function hasResource(p: JsonObject): boolean {
  return hasKey(p, 'resource') && p['resource'] !== '';
}

/** ADR 0060: a `stepId` is unique within its workflow; other workflows of the file may reuse it. */
function checkUniqueStepIds(file: JsonObject): void {
  const issues: WorkflowErrorDetail[] = [];
  const workflows = file['workflows'];
  if (!Array.isArray(workflows)) return;
  const pointer = (w: number, i: number) => toPointer(['workflows', w, 'steps', i, 'stepId']);
  for (let w = 0; w < workflows.length; w++) {
    const wf = workflows[w];
    const steps = isJsonObject(wf) ? wf['steps'] : undefined;
    if (!Array.isArray(steps)) continue;
    // Index of the first step with each id, in this workflow; locations are built only for a repeat.
    const seen = new Map<string, number>();
    for (let i = 0; i < steps.length; i++) {
      const step = steps[i];
      if (!isJsonObject(step)) continue;
      const id = step['stepId'] as string; // a string: the schema was checked first
      const first = seen.get(id);
      if (first === undefined) seen.set(id, i);
      else issues.push({ pointer: pointer(w, i), detail: `stepId repeats the one at ${pointer(w, first)}` });
    }
  }
  if (issues.length > 0) throwDetails('WORKFLOW_DUPLICATE_STEP_ID', 'workflow', issues);
}
