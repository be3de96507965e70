import {
  validateBootstrap,
  type DeploymentRecord,
  type JsonObject,
  type JsonValue,
} from '@org/workflow-compiler';
import { TestRunnerError } from './errors.js';
import { compilerDetails } from './internal/compiler-details.js';
import { plainObject } from './internal/json.js';

/** Input of {@link mergeTestBootstrap}. */
export interface MergeTestBootstrapInput {
  /** Name of the bootstrap file (or the test) in messages. */
  file: string;
  /** The parsed partial bootstrap (`useThisTestBootstrapFile`): a record, or an array of exactly one record. */
  partial: JsonValue | undefined;
  /** Deployment id used when the partial names none; also the `${testDeploymentId}` variable. */
  deploymentId: string;
  /** What the record's `remoteConfiguration` says (informational: the deployer gets the compiled workflow). */
  remoteConfiguration: string;
  /** The test's `data`, merged over the record's `data`. */
  data: JsonObject | undefined;
  /** Variables for `${NAME}` (config variables overridden by the test's). */
  variables: Readonly<Record<string, string>>;
}

/** Variable names the harness always defines. */
export const BUILT_IN_VARIABLES = ['testDeploymentId'] as const;

const VARIABLE = /\$\{([A-Za-z_][A-Za-z0-9_.-]*)\}/g;

/**
 * Completes a partial test bootstrap into one deployment record for the engine (ADR 0064):
 *
 * 1. the partial is a record or a one-record array (an empty file means `{}`);
 * 2. `deploymentId` is kept when the partial sets one, else the harness id; `remoteConfiguration` is always the
 *    harness value (the workflow comes from the test, never from the bootstrap);
 * 3. the test's `data` is deep-merged over the record's `data` (objects merge, the test wins, arrays replace);
 * 4. `${NAME}` in every string value (not in keys) is replaced from `variables` plus `testDeploymentId`, in one
 *    pass; unknown names are left as written;
 * 5. the record is validated and normalised by the compiler's `validateBootstrap`: the legacy `hosts` map
 *    becomes `allowExternalHostAccess` (docs/interfaces.md §3.6), string signers become objects.
 *
 * Host URLs are not rewritten: the deployer routes every outbound call to the in-process mock transport, which
 * answers the mock host only (S156).
 *
 * @throws TestRunnerError `TESTRUNNER_BOOTSTRAP_INVALID` (not one record, or the compiler's validation failed;
 *   `details.workflowCode` holds the compiler's code, `details.errors` its failed fields).
 */
export function mergeTestBootstrap(input: MergeTestBootstrapInput): DeploymentRecord {
  const record = oneRecord(input.partial, input.file);
  const id = typeof record['deploymentId'] === 'string' ? record['deploymentId'] : input.deploymentId;
  record['deploymentId'] = id;
  record['remoteConfiguration'] = input.remoteConfiguration;
  if (input.data !== undefined) {
    const base = record['data'];
    record['data'] = deepMerge(isObject(base) ? base : plainObject<JsonValue>([]), input.data);
  }
  const vars = plainObject(Object.entries(input.variables));
  vars['testDeploymentId'] = id;
  const substituted = substitute(record, vars) as JsonObject;
  try {
    const [normalised] = validateBootstrap(substituted);
    return normalised as DeploymentRecord;
  } catch (err) {
    const e = err as { message?: unknown };
    throw new TestRunnerError('TESTRUNNER_BOOTSTRAP_INVALID', `${input.file}: ${String(e.message)}`, {
      cause: err,
      details: compilerDetails(err),
    });
  }
}

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function oneRecord(partial: JsonValue | undefined, file: string): JsonObject {
  if (partial === undefined) return plainObject<JsonValue>([]);
  const value = Array.isArray(partial) && partial.length === 1 ? partial[0] : partial;
  if (!isObject(value)) {
    throw new TestRunnerError(
      'TESTRUNNER_BOOTSTRAP_INVALID',
      `${file}: a test bootstrap is one record (an object, or an array of exactly one object)`,
    );
  }
  return plainObject(Object.entries(value));
}

/** Deep merge for data (docs/interfaces.md §4.6 recommendation): objects merge key by key, anything else replaces. */
export function deepMerge(base: JsonObject, over: JsonObject): JsonObject {
  const out = plainObject(Object.entries(base));
  for (const [k, v] of Object.entries(over)) {
    const b = out[k];
    out[k] = isObject(b) && isObject(v) ? deepMerge(b, v) : v;
  }
  return out;
}

/** `${NAME}` replacement in string values, one pass (a replacement is never scanned again). */
export function substitute(value: JsonValue, vars: Readonly<Record<string, string>>): JsonValue {
  if (typeof value === 'string') {
    return value.replace(VARIABLE, (whole, name: string) =>
      Object.prototype.hasOwnProperty.call(vars, name) ? (vars[name] as string) : whole,
    );
  }
  if (Array.isArray(value)) return value.map((v) => substitute(v, vars));
  if (isObject(value)) return plainObject(Object.entries(value).map(([k, v]) => [k, substitute(v, vars)]));
  return value;
}
