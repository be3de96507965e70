import type { WorkflowErrorCode, WorkflowErrorDetail } from '../errors.js';
import {
  emptyObject,
  isJsonObject,
  quoteName,
  toPointer,
  type JsonObject,
  type JsonValue,
} from '../json-value.js';
import { throwDetails } from './schema-check.js';

type Issues = WorkflowErrorDetail[];

/** Exact `keyHex` length per purpose and type (docs/interfaces.md §2); symmetric keys have no public half. */
function expectedHexLength(purpose: string, type: string): number | null {
  if (purpose === 'symmetric' && type === 'public') return null;
  return purpose === 'sign' && type === 'secret' ? 128 : 64;
}

/**
 * Rules beyond the schema, SPEC.md §8. Each class has its own code; every issue of the first failing class is
 * reported at once. Runs on schema-valid, normalised records.
 */
export function checkBootstrapRules(records: JsonObject[]): void {
  const checks: [WorkflowErrorCode, (r: JsonObject, i: number, out: Issues) => void][] = [
    ['WORKFLOW_BOOTSTRAP_DUPLICATE_ID', duplicateIds],
    ['WORKFLOW_BOOTSTRAP_KEY_INVALID', keyMaterial],
    ['WORKFLOW_BOOTSTRAP_KEY_REFERENCE', keyReferences],
    ['WORKFLOW_BOOTSTRAP_SIGNER_CONFLICT', signerConflicts],
    ['WORKFLOW_BOOTSTRAP_SIGNER_COUNT', signerCount],
    ['WORKFLOW_BOOTSTRAP_INVALID', consistency],
  ];
  const deploymentIds: Issues = [];
  uniqueIn(records, 'deploymentId', [], deploymentIds);
  if (deploymentIds.length > 0) throwDetails('WORKFLOW_BOOTSTRAP_DUPLICATE_ID', 'bootstrap', deploymentIds);
  for (const [code, check] of checks) {
    const issues: Issues = [];
    records.forEach((r, i) => check(r, i, issues));
    if (issues.length > 0) throwDetails(code, 'bootstrap', issues);
  }
}

/**
 * Reports a repeated `field` value in `items`. With `scope`, uniqueness is per value of that member too: the key is
 * (`field`, `scope`), so `{id: "x", access: "call"}` and `{id: "x", access: "receive"}` do not clash.
 */
function uniqueIn(
  items: JsonValue,
  field: string,
  at: (string | number)[],
  out: Issues,
  scope?: string,
): void {
  if (!Array.isArray(items)) return;
  const seen = new Set<string>();
  items.forEach((item, i) => {
    if (!isJsonObject(item)) return;
    const id = item[field];
    if (typeof id !== 'string') return;
    const within = scope === undefined ? undefined : item[scope];
    const key = scope === undefined ? id : JSON.stringify([id, within ?? null]);
    if (seen.has(key)) {
      const of = typeof within === 'string' ? ` for ${scope} ${quoteName(within)}` : '';
      out.push({ pointer: toPointer([...at, i, field]), detail: `duplicate id ${quoteName(id)}${of}` });
    }
    seen.add(key);
  });
}

/** `id` is unique per list; in `allowDeploymentAccess` per (`id`, `access`): one id may name a call and a receive. */
function duplicateIds(r: JsonObject, i: number, out: Issues): void {
  for (const list of ['keys', 'allowExternalHostAccess', 'allowHttpServerAccess', 'allowFileAccess']) {
    uniqueIn(r[list] ?? [], 'id', [i, list], out);
  }
  uniqueIn(r['allowDeploymentAccess'] ?? [], 'id', [i, 'allowDeploymentAccess'], out, 'access');
}

function keys(r: JsonObject): JsonObject[] {
  return Array.isArray(r['keys']) ? (r['keys'] as JsonObject[]) : [];
}

function keyMaterial(r: JsonObject, i: number, out: Issues): void {
  keys(r).forEach((k, j) => {
    const want = expectedHexLength(k['purpose'] as string, k['type'] as string);
    const hex = k['keyHex'] as string;
    const pointer = toPointer([i, 'keys', j, want === null ? 'type' : 'keyHex']);
    const name = quoteName(k['id'] as string);
    if (want === null) out.push({ pointer, detail: `key ${name}: a symmetric key has no public form` });
    else if (hex.length !== want) {
      out.push({ pointer, detail: `key ${name}: expected ${want} hex characters, found ${hex.length}` });
    }
  });
}

function signerIds(packaging: JsonObject, list: string): { id: string; pointer: (string | number)[] }[] {
  const signers = packaging[list];
  if (!Array.isArray(signers)) return [];
  return signers.map((s, j) => ({ id: (s as JsonObject)['id'] as string, pointer: [list, j, 'id'] }));
}

function keyReferences(r: JsonObject, i: number, out: Issues): void {
  const packaging = r['packaging'];
  if (!isJsonObject(packaging)) return;
  const byId = new Map(keys(r).map((k) => [k['id'] as string, k]));
  const need = (id: string, at: (string | number)[], purpose: string, type: string): void => {
    const k = byId.get(id);
    if (k !== undefined && k['purpose'] === purpose && k['type'] === type) return;
    const what = k === undefined ? 'is not in keys' : `must be a ${purpose} ${type} key`;
    out.push({ pointer: toPointer([i, 'packaging', ...at]), detail: `key ${quoteName(id)} ${what}` });
  };
  const identities = Array.isArray(packaging['packagerIdentities']) ? packaging['packagerIdentities'] : [];
  identities.forEach((id, j) => need(id as string, ['packagerIdentities', j], 'authenticated', 'public'));
  for (const s of [
    ...signerIds(packaging, 'requiredSigners'),
    ...signerIds(packaging, 'additionalSigners'),
  ]) {
    need(s.id, s.pointer, 'sign', 'public');
  }
  const ownSecret = keys(r).some((k) => k['purpose'] === 'authenticated' && k['type'] === 'secret');
  if (identities.length > 0 && !ownSecret) {
    out.push({
      pointer: toPointer([i, 'keys']),
      detail: "packagerIdentities need the deployment's own authenticated secret key in keys",
    });
  }
}

function signerConflicts(r: JsonObject, i: number, out: Issues): void {
  const packaging = r['packaging'];
  if (!isJsonObject(packaging)) return;
  const seen = new Map<string, string>();
  for (const s of [
    ...signerIds(packaging, 'requiredSigners'),
    ...signerIds(packaging, 'additionalSigners'),
  ]) {
    const pointer = toPointer([i, 'packaging', ...s.pointer]);
    const first = seen.get(s.id);
    // S91: a signer counted as required must not also count toward the additional threshold.
    if (first !== undefined)
      out.push({ pointer, detail: `signer ${quoteName(s.id)} is already listed at ${first}` });
    else seen.set(s.id, pointer);
  }
}

function signerCount(r: JsonObject, i: number, out: Issues): void {
  const packaging = r['packaging'];
  if (!isJsonObject(packaging) || packaging['requiredAdditionalSignerCount'] === undefined) return;
  const k = packaging['requiredAdditionalSignerCount'] as number;
  const pool = signerIds(packaging, 'additionalSigners').length;
  if (k > pool) {
    out.push({
      pointer: toPointer([i, 'packaging', 'requiredAdditionalSignerCount']),
      detail: `expected an integer 0..${pool} (the number of additionalSigners), found a larger integer`,
    });
  }
}

function consistency(r: JsonObject, i: number, out: Issues): void {
  timeouts(r, i, out);
  assetReferences(r, i, out);
  packagerDirectories(r, i, out);
}

/** A flag that is on, or a `${VAR}` reference `validateBootstrap` cannot judge (the agent substitutes first, §8). */
const onOrUnknown = (v: JsonValue | undefined): boolean =>
  v === true || v === 'true' || (typeof v === 'string' && v.startsWith('${'));

/** The `data` lists of `allowPackagerAccess` (SPEC.md §8.5): which `allowFileAccess` entries the packager reads. */
const PACKAGER_DIRECTORY_LISTS = ['resourceIds', 'workflowSourceIds'] as const;

/**
 * With `allowPackagerAccess` on, `data.resourceIds` (at least one) and `data.workflowSourceIds` (optional) are lists
 * of `allowFileAccess` ids whose entries grant `READ` and `LIST` (SPEC.md §8.5). An id holding `${` is left to the
 * agent, which substitutes before it validates.
 */
function packagerDirectories(r: JsonObject, i: number, out: Issues): void {
  const grant = r['allowPackagerAccess'];
  if (grant !== true && grant !== 'true') return;
  const files = new Map<string, JsonObject>();
  for (const f of Array.isArray(r['allowFileAccess']) ? r['allowFileAccess'] : [])
    if (isJsonObject(f) && typeof f['id'] === 'string') files.set(f['id'], f);
  const data = isJsonObject(r['data']) ? r['data'] : emptyObject();
  for (const list of PACKAGER_DIRECTORY_LISTS) {
    const ids = data[list];
    const at = [i, 'data', list];
    if (ids === undefined && list === 'workflowSourceIds') continue;
    if (!Array.isArray(ids) || (list === 'resourceIds' && ids.length === 0)) {
      const what = list === 'resourceIds' ? 'a non-empty array' : 'an array';
      out.push({
        pointer: toPointer(at),
        detail: `allowPackagerAccess needs data.${list} as ${what} of allowFileAccess ids`,
      });
      continue;
    }
    ids.forEach((id, j) => {
      const pointer = toPointer([...at, j]);
      if (typeof id !== 'string' || id === '') {
        out.push({ pointer, detail: 'expected an allowFileAccess id' });
        return;
      }
      if (id.includes('${')) return;
      const entry = files.get(id);
      if (entry === undefined)
        out.push({ pointer, detail: `${quoteName(id)} names no allowFileAccess entry` });
      else if (!onOrUnknown(entry['READ']) || !onOrUnknown(entry['LIST']))
        out.push({ pointer, detail: `allowFileAccess ${quoteName(id)} must grant READ and LIST` });
    });
  }
}

/** A server's `serveFromPackagedAsset.packagedAssetFileId` names an `allowFileAccess` entry (docs/interfaces.md §3.4). */
function assetReferences(r: JsonObject, i: number, out: Issues): void {
  const files = new Set(
    (Array.isArray(r['allowFileAccess']) ? r['allowFileAccess'] : []).map((f) => (f as JsonObject)['id']),
  );
  const servers = Array.isArray(r['allowHttpServerAccess']) ? r['allowHttpServerAccess'] : [];
  servers.forEach((server, j) => {
    const asset = (server as JsonObject)['serveFromPackagedAsset'];
    if (!isJsonObject(asset) || files.has(asset['packagedAssetFileId'])) return;
    out.push({
      pointer: toPointer([i, 'allowHttpServerAccess', j, 'serveFromPackagedAsset', 'packagedAssetFileId']),
      detail: 'packagedAssetFileId must name an allowFileAccess id',
    });
  });
}

function timeouts(r: JsonObject, i: number, out: Issues): void {
  const frequency = r['frequency'];
  const timeout = r['remoteConfigurationTimeout'];
  if (typeof frequency === 'number' && typeof timeout === 'number' && frequency > 0 && timeout >= frequency) {
    out.push({
      pointer: toPointer([i, 'remoteConfigurationTimeout']),
      detail: 'remoteConfigurationTimeout must be below frequency when frequency > 0',
    });
  }
}
