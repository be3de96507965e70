import type { Bootstrap } from './bootstrap-types.js';
import {
  substituteVariables,
  type SubstituteVariablesOptions,
  type WholeReference,
} from './bootstrap-variables.js';
import { checkBootstrapRules } from './internal/bootstrap-rules.js';
import { checkSchema, throwDetails } from './internal/schema-check.js';
import { bootstrap as bootstrapValidator } from './generated/validators.js';
import {
  emptyObject,
  hasKey,
  isJsonObject,
  toPointer,
  type JsonObject,
  type JsonValue,
} from './json-value.js';
import type { ParseStrictJsonOptions } from './strict-json.js';
import { readInput } from './validate-workflow.js';

const validateSchema = () => bootstrapValidator;

/** Options of {@link validateBootstrap}. */
export type ValidateBootstrapOptions = ParseStrictJsonOptions;

/**
 * Reads a bootstrap (bytes, JSON text, or a parsed value), validates it against `BOOTSTRAP_SCHEMA` and the
 * rules in SPEC.md §8, and returns it normalised: a bare record becomes a one-element array (pointers in errors
 * then start with `/0`); the legacy `hosts` map is appended to `allowExternalHostAccess` (`allowlist` tuples
 * become `allowList` objects); plain-string signers become `{ id }`; `servePackagedAsset` (an object, or a plain
 * file id) becomes `serveFromPackagedAsset`. Error messages name fields and key ids, never key material or other
 * values.
 *
 * @throws WorkflowError syntax codes `WORKFLOW_JSON_*`; `WORKFLOW_VALUE_INVALID`; `WORKFLOW_BOOTSTRAP_INVALID`
 *   (schema, every violation in `details.errors`); `WORKFLOW_BOOTSTRAP_DUPLICATE_ID`; `WORKFLOW_BOOTSTRAP_KEY_INVALID`;
 *   `WORKFLOW_BOOTSTRAP_KEY_REFERENCE`; `WORKFLOW_BOOTSTRAP_SIGNER_CONFLICT`; `WORKFLOW_BOOTSTRAP_SIGNER_COUNT`.
 */
export function validateBootstrap(input: unknown, options: ValidateBootstrapOptions = {}): Bootstrap {
  const raw = readInput(input, options);
  const records = isJsonObject(raw) ? [raw] : raw;
  checkSchema(validateSchema, records, 'WORKFLOW_BOOTSTRAP_INVALID', 'bootstrap');
  const list = records as JsonObject[];
  list.forEach((r, i) => normaliseRecord(r, i));
  checkBootstrapRules(list);
  return list as unknown as Bootstrap;
}

/** Options of {@link validateBootstrapWithVariables}. */
export type ValidateBootstrapWithVariablesOptions = ValidateBootstrapOptions & SubstituteVariablesOptions;

/** Result of {@link validateBootstrapWithVariables}. */
export interface SubstitutedBootstrap {
  bootstrap: Bootstrap;
  /** Every variable the bootstrap referenced, each once. */
  used: string[];
}

/**
 * Reads a bootstrap, replaces its `${NAME}` references with `substituteVariables` (SPEC.md §8.1), then validates it
 * like {@link validateBootstrap}. Substitution runs before the schema, so `"enabled": "${FLAG}"` is checked as the
 * value FLAG holds. A string that was exactly one reference (`"port": "${PORT}"`) where the schema wants a number
 * becomes that number when its value is JSON number text; nothing else changes type.
 *
 * @throws WorkflowError everything {@link validateBootstrap} and `substituteVariables` throw.
 */
export function validateBootstrapWithVariables(
  input: unknown,
  variables: ReadonlyMap<string, string>,
  options: ValidateBootstrapWithVariablesOptions = {},
): SubstitutedBootstrap {
  const raw = readInput(input, options);
  const records = isJsonObject(raw) ? [raw] : raw;
  const { value, used, whole } = substituteVariables(records, variables, options);
  if (whole.length > 0) retypeNumbers(value, whole);
  return { bootstrap: validateBootstrap(value, options), used };
}

const JSON_NUMBER = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$/;

/** Whole references whose position the schema types as integer or number become numbers. */
function retypeNumbers(value: JsonValue, whole: WholeReference[]): void {
  const validate = validateSchema();
  if (validate(value)) return;
  const wanted = new Set<string>();
  for (const e of validate.errors ?? []) {
    const t = (e.params as { type?: unknown }).type;
    const types = typeof t === 'string' ? t.split(',') : [];
    if (e.keyword === 'type' && (types.includes('integer') || types.includes('number')))
      wanted.add(e.instancePath);
  }
  for (const w of whole) {
    if (!wanted.has(w.pointer)) continue;
    const text = (w.parent as Record<string | number, JsonValue>)[w.key];
    if (typeof text !== 'string' || !JSON_NUMBER.test(text)) continue;
    const n = Number(text);
    if (!Number.isFinite(n) || (Number.isInteger(n) && !Number.isSafeInteger(n))) continue;
    (w.parent as Record<string | number, JsonValue>)[w.key] = n;
  }
}

function normaliseRecord(record: JsonObject, index: number): void {
  convertLegacyHosts(record);
  const packaging = record['packaging'];
  if (isJsonObject(packaging)) {
    for (const list of ['requiredSigners', 'additionalSigners']) {
      const signers = packaging[list];
      if (Array.isArray(signers)) packaging[list] = signers.map(signerObject);
    }
  }
  const servers = record['allowHttpServerAccess'];
  if (Array.isArray(servers))
    servers.forEach((s, i) => renameAsset(s as JsonObject, [index, 'allowHttpServerAccess', i]));
}

function signerObject(s: JsonValue): JsonValue {
  if (typeof s !== 'string') return s;
  const o = emptyObject();
  o['id'] = s;
  return o;
}

function renameAsset(server: JsonObject, at: (string | number)[]): void {
  if (!hasKey(server, 'servePackagedAsset')) return;
  if (hasKey(server, 'serveFromPackagedAsset')) {
    throwDetails('WORKFLOW_BOOTSTRAP_INVALID', 'bootstrap', [
      {
        pointer: toPointer([...at, 'servePackagedAsset']),
        detail: 'use serveFromPackagedAsset or servePackagedAsset, not both',
      },
    ]);
  }
  const legacy = server['servePackagedAsset'] as JsonValue;
  // `"servePackagedAsset": "<file id>"` (reference bootstraps) means `{ "packagedAssetFileId": "<file id>" }`.
  if (typeof legacy === 'string') {
    const asset = emptyObject();
    asset['packagedAssetFileId'] = legacy;
    server['serveFromPackagedAsset'] = asset;
  } else server['serveFromPackagedAsset'] = legacy;
  delete server['servePackagedAsset'];
}

/** docs/interfaces.md §3.6: map key = host id; `allowlist: [[method, regex]]` → `allowList: [{method, uriPattern}]`. */
function convertLegacyHosts(record: JsonObject): void {
  const hosts = record['hosts'];
  if (!isJsonObject(hosts)) return;
  const list = Array.isArray(record['allowExternalHostAccess']) ? record['allowExternalHostAccess'] : [];
  for (const hostId of Object.keys(hosts)) {
    const legacy = hosts[hostId] as JsonObject;
    const host = emptyObject();
    host['id'] = hostId;
    for (const k of Object.keys(legacy)) {
      if (k !== 'allowlist') host[k] = legacy[k] as JsonValue;
    }
    if (Array.isArray(legacy['allowlist'])) host['allowList'] = legacy['allowlist'].map(allowEntry);
    list.push(host);
  }
  record['allowExternalHostAccess'] = list;
  delete record['hosts'];
}

function allowEntry(tuple: JsonValue): JsonValue {
  const [method, uriPattern] = tuple as [string, string];
  const o = emptyObject();
  o['method'] = method;
  o['uriPattern'] = uriPattern;
  return o;
}
