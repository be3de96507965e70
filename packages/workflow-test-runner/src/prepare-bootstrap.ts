import {
  FORBIDDEN_BOOTSTRAP_VARIABLES,
  validateBootstrapWithVariables,
  VARIABLE_NAME_PATTERN,
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
  /** Variables for `${NAME}` (config variables overridden by the test's); they win over `environment`. */
  variables: Readonly<Record<string, string>>;
  /**
   * The environment the agent would have (the caller passes `process.env`: this package reads none); a name
   * outside the variable grammar is ignored, as the agent ignores it.
   */
  environment?: Readonly<Record<string, string | undefined>>;
}

/** Variable names the harness always defines. */
export const BUILT_IN_VARIABLES = ['testDeploymentId'] as const;

/** The values for `${NAME}`, lowest first: the environment, the variables, the built-in `testDeploymentId`. */
function variablesOf(input: MergeTestBootstrapInput, id: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const [name, value] of Object.entries(input.environment ?? {}))
    if (value !== undefined && VARIABLE_NAME_PATTERN.test(name)) out.set(name, value);
  for (const [name, value] of Object.entries(input.variables)) out.set(name, value);
  out.set('testDeploymentId', id);
  return out;
}

/**
 * Completes a partial test bootstrap into one deployment record for the engine (ADR 0064):
 *
 * 1. the partial is a record or a one-record array (an empty file means `{}`);
 * 2. `deploymentId` is kept when the partial sets one, else the harness id; `remoteConfiguration` is always the
 *    harness value (the workflow comes from the test, never from the bootstrap);
 * 3. the test's `data` is deep-merged over the record's `data` (objects merge, the test wins, arrays replace);
 * 4. `${NAME}` in every string value (not in keys) is replaced as the agent replaces it (the compiler's
 *    `validateBootstrapWithVariables`, SPEC.md §8.1 there): from the `environment`, overridden by `variables`
 *    (as the agent's secrets source overrides its environment), plus `testDeploymentId`; one pass; `$${` is a
 *    literal `${`; a name set nowhere, or one of the agent's key variables, is an error; a whole-string reference
 *    where the schema wants a number becomes that number;
 * 5. the record is validated and normalised by the compiler: the legacy `hosts` map becomes
 *    `allowExternalHostAccess` (docs/interfaces.md §3.6), string signers become objects.
 *
 * Host URLs are not rewritten: the deployer routes every outbound call to the in-process mock transport, which
 * answers the mock host only (S156).
 *
 * @throws TestRunnerError `TESTRUNNER_BOOTSTRAP_INVALID` (not one record, or the compiler's substitution or
 *   validation failed: `details.workflowCode` holds the compiler's code, such as `WORKFLOW_VARIABLE_MISSING` or
 *   `WORKFLOW_VARIABLE_INVALID`, and `details.errors` its failed fields).
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
  try {
    const { bootstrap } = validateBootstrapWithVariables(record, variablesOf(input, id), {
      // The agent's key variables (S51): refused wherever they are set, as the agent refuses them.
      forbidden: FORBIDDEN_BOOTSTRAP_VARIABLES,
    });
    return bootstrap[0] as DeploymentRecord;
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
