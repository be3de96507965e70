/**
 * Checks Kubernetes manifests without a cluster and without the network: every document is validated against
 * the Kubernetes JSON schemas (strict: an unknown field is an error, as `kubectl --validate=strict` does), then
 * against the pod security rules this project asks of its workloads.
 *
 * Schemas: the npm package kubernetes-models 1.7.1 ships the JSON schemas generated from the Kubernetes v1.19.2
 * OpenAPI document (one module per definition under `_schemas/`, each registering its schema with the
 * package's Ajv instance). They are copied from there into the project's own Ajv, each object schema closed with
 * `additionalProperties: false`. Fields added after Kubernetes 1.19 are therefore refused.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import yaml from 'js-yaml';

/** apiVersion/kind → schema id of the definitions this project's manifests may use. */
export const KINDS: Readonly<Record<string, string>> = {
  'apps/v1/Deployment': 'io.k8s.api.apps.v1.Deployment',
  'v1/Service': 'io.k8s.api.core.v1.Service',
  'v1/Secret': 'io.k8s.api.core.v1.Secret',
  'v1/ConfigMap': 'io.k8s.api.core.v1.ConfigMap',
  'v1/PersistentVolumeClaim': 'io.k8s.api.core.v1.PersistentVolumeClaim',
  'networking.k8s.io/v1/NetworkPolicy': 'io.k8s.api.networking.v1.NetworkPolicy',
};

export const SCHEMA_SOURCE = 'kubernetes-models 1.7.1 (Kubernetes v1.19.2 OpenAPI)';

const MODULES = [
  'IoK8sApiAppsV1Deployment',
  'IoK8sApiCoreV1Service',
  'IoK8sApiCoreV1Secret',
  'IoK8sApiCoreV1ConfigMap',
  'IoK8sApiCoreV1PersistentVolumeClaim',
  'IoK8sApiNetworkingV1NetworkPolicy',
];

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Obj = { [key: string]: Json };

/** Closes every object schema that lists its properties and says nothing about others. */
function strict(schema: Json): Json {
  if (Array.isArray(schema)) return schema.map(strict);
  if (schema === null || typeof schema !== 'object') return schema;
  const out: Obj = {};
  for (const [k, v] of Object.entries(schema)) {
    out[k] =
      k === 'properties' && v !== null && typeof v === 'object' && !Array.isArray(v)
        ? Object.fromEntries(Object.entries(v).map(([name, s]) => [name, strict(s)]))
        : strict(v);
  }
  if (out['properties'] !== undefined && out['additionalProperties'] === undefined) {
    out['additionalProperties'] = false;
  }
  return out;
}

/** The schemas as kubernetes-models registers them: id → schema. */
function kubernetesSchemas(): Map<string, Json> {
  const require = createRequire(import.meta.url);
  // The package's exports name few files: its root is found from one of them.
  const root = dirname(
    dirname(require.resolve('kubernetes-models/_schemas/IoK8sApimachineryPkgApisMetaV1ObjectMeta')),
  );
  const fromRoot = createRequire(join(root, 'package.json'));
  for (const name of MODULES) {
    (fromRoot(join(root, '_schemas', `${name}.js`)) as { addSchema(): void }).addSchema();
  }
  const validateDir = dirname(fromRoot.resolve('@kubernetes-models/validate'));
  const registry = fromRoot(join(validateDir, 'ajv.js')) as {
    ajv: { schemas: Record<string, { schema: Json } | undefined> };
  };
  const out = new Map<string, Json>();
  for (const [id, env] of Object.entries(registry.ajv.schemas)) {
    if (id.startsWith('io.k8s.') && env !== undefined) out.set(id, env.schema);
  }
  return out;
}

// apimachinery pkg/api/resource/quantity.go: a signed decimal number, then a binary-SI, decimal-SI or exponent suffix.
const QUANTITY = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?\d+)?$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})$/i;

function makeAjv(): Ajv {
  const ajv = new Ajv({ allErrors: true, strictTypes: false, strictRequired: false });
  ajv.addFormat('int32', {
    type: 'number',
    validate: (n: number) => Number.isInteger(n) && Math.abs(n) <= 2 ** 31,
  });
  ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isSafeInteger(n) });
  ajv.addFormat('double', { type: 'number', validate: () => true });
  ajv.addFormat('quantity', QUANTITY);
  ajv.addFormat('byte', BASE64);
  ajv.addFormat('date-time', DATE_TIME);
  for (const [id, schema] of kubernetesSchemas()) ajv.addSchema(strict(schema) as object, id);
  return ajv;
}

let shared: Ajv | undefined;
const compiled = new Map<string, ValidateFunction>();

function validatorFor(id: string): ValidateFunction {
  let v = compiled.get(id);
  if (v === undefined) {
    shared ??= makeAjv();
    v = shared.getSchema(id);
    if (v === undefined) throw new Error(`no schema ${id}`);
    compiled.set(id, v);
  }
  return v;
}

function describe(e: ErrorObject): string {
  const at = e.instancePath === '' ? '/' : e.instancePath;
  if (e.keyword === 'additionalProperties') {
    return `${at}: unknown field "${String((e.params as { additionalProperty: string }).additionalProperty)}"`;
  }
  return `${at}: ${e.message ?? e.keyword}`;
}

function isObj(v: unknown): v is Obj {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** Schema problems of one document, as `pointer: message` lines; empty when it is valid. */
export function schemaProblems(doc: unknown): string[] {
  if (!isObj(doc)) return ['/: not an object'];
  const text = (v: Json | undefined) => (typeof v === 'string' ? v : JSON.stringify(v));
  const key = `${text(doc['apiVersion'])}/${text(doc['kind'])}`;
  const id = KINDS[key];
  if (id === undefined) return [`/: apiVersion/kind ${key} is not one of ${Object.keys(KINDS).join(', ')}`];
  const validate = validatorFor(id);
  if (validate(doc)) return [];
  // oneOf [schema, null] repeats each problem as "must be null" and "must match exactly one": keep the cause.
  const errors = (validate.errors ?? []).filter(
    (e) =>
      e.keyword !== 'oneOf' && !(e.keyword === 'type' && (e.params as { type?: string }).type === 'null'),
  );
  return [...new Set((errors.length > 0 ? errors : (validate.errors ?? [])).map(describe))];
}

function get(o: Json | undefined, ...path: string[]): Json | undefined {
  let cur: Json | undefined = o;
  for (const p of path) cur = isObj(cur) ? cur[p] : undefined;
  return cur;
}

/**
 * The project's rules for a workload (a Deployment): non-root, read-only root file system, no privilege
 * escalation, every capability dropped, the runtime's seccomp profile, no host namespaces, no service account
 * token, resource requests and limits, and liveness and readiness probes on /health and /ready.
 */
export function policyProblems(doc: unknown): string[] {
  if (!isObj(doc) || doc['kind'] !== 'Deployment') return [];
  const pod = get(doc, 'spec', 'template', 'spec');
  if (!isObj(pod)) return ['/spec/template/spec: missing'];
  const problems: string[] = [];
  const podSc = get(pod, 'securityContext');
  for (const ns of ['hostNetwork', 'hostPID', 'hostIPC']) {
    if (pod[ns] === true) problems.push(`/spec/template/spec/${ns}: must not be true`);
  }
  if (pod['automountServiceAccountToken'] !== false) {
    problems.push('/spec/template/spec/automountServiceAccountToken: must be false');
  }
  const containers = [
    ...((get(pod, 'initContainers') as Json[] | undefined) ?? []).map((c) => ['initContainers', c] as const),
    ...((get(pod, 'containers') as Json[] | undefined) ?? []).map((c) => ['containers', c] as const),
  ];
  const index: Record<string, number> = { initContainers: 0, containers: 0 };
  for (const [list, c] of containers) {
    const at = `/spec/template/spec/${list}/${String(index[list]!++)}`;
    const sc = get(c, 'securityContext');
    const effective = (field: string) => get(sc, field) ?? get(podSc, field);
    if (effective('runAsNonRoot') !== true) problems.push(`${at}/securityContext/runAsNonRoot: must be true`);
    const uid = effective('runAsUser');
    if (uid === 0) problems.push(`${at}/securityContext/runAsUser: must not be 0`);
    if (get(sc, 'readOnlyRootFilesystem') !== true) {
      problems.push(`${at}/securityContext/readOnlyRootFilesystem: must be true`);
    }
    if (get(sc, 'allowPrivilegeEscalation') !== false) {
      problems.push(`${at}/securityContext/allowPrivilegeEscalation: must be false`);
    }
    if (get(sc, 'privileged') === true) problems.push(`${at}/securityContext/privileged: must not be true`);
    const drop = get(sc, 'capabilities', 'drop');
    if (!Array.isArray(drop) || !drop.includes('ALL')) {
      problems.push(`${at}/securityContext/capabilities/drop: must include ALL`);
    }
    const add = get(sc, 'capabilities', 'add');
    if (Array.isArray(add) && add.length > 0)
      problems.push(`${at}/securityContext/capabilities/add: must be empty`);
    if (get(effective('seccompProfile'), 'type') !== 'RuntimeDefault') {
      problems.push(`${at}/securityContext/seccompProfile/type: must be RuntimeDefault`);
    }
    for (const kind of ['requests', 'limits']) {
      for (const r of ['cpu', 'memory']) {
        if (get(c, 'resources', kind, r) === undefined)
          problems.push(`${at}/resources/${kind}/${r}: missing`);
      }
    }
    if (list === 'containers') {
      for (const [probe, path] of [
        ['livenessProbe', '/health'],
        ['readinessProbe', '/ready'],
      ] as const) {
        if (get(c, probe, 'httpGet', 'path') !== path)
          problems.push(`${at}/${probe}/httpGet/path: must be ${path}`);
      }
    }
  }
  if (containers.length === 0) problems.push('/spec/template/spec/containers: none');
  return problems;
}

export interface Manifest {
  readonly file: string;
  /** Position of the document in its file, from 0. */
  readonly index: number;
  readonly doc: unknown;
}

/** Every document of a multi-document YAML file (empty documents are skipped). */
export function readManifests(file: string): Manifest[] {
  return yaml
    .loadAll(readFileSync(file, 'utf8'))
    .map((doc, index) => ({ file, index, doc }))
    .filter((m) => m.doc !== null && m.doc !== undefined);
}

/** Schema and policy problems of one document. */
export function manifestProblems(doc: unknown): string[] {
  const schema = schemaProblems(doc);
  return schema.length > 0 ? schema : policyProblems(doc);
}
