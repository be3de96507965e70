/**
 * JSON Schema (draft-07) of a bootstrap, docs/interfaces.md §3. It accepts the input forms (a bare record or an
 * array; legacy `hosts` map; signers as plain strings; `servePackagedAsset`, also as a plain file id);
 * `validateBootstrap` normalises them.
 * Records and every listed sub-object reject unknown properties; `data` and `metadata` are free-form.
 */
import { STRING_BOOLEAN_SCHEMA as SB } from './workflow-schema.js';

const str = { type: 'string' } as const;
const id = { type: 'string', minLength: 1 } as const;
const ms = { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER } as const;
const strings = { type: 'array', items: str } as const;
const stringMap = { type: 'object', additionalProperties: str } as const;
const free = { type: 'object' } as const;
const HTTP_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH'];
/**
 * Largest `scriptTimeoutMs` of a record: ten minutes, the workflow engine's `MAX_LIMITS.timeMs` (the compiler does not
 * depend on the engine; `@org/workflow-runtime` tests that the two agree).
 */
export const MAX_SCRIPT_TIMEOUT_MS = 600_000;
/** Largest `packaging.clockSkewSeconds`: one day. */
export const MAX_CLOCK_SKEW_SECONDS = 86_400;

function strict(properties: Record<string, unknown>, required: string[] = []): Record<string, unknown> {
  return { type: 'object', additionalProperties: false, required, properties };
}

const key = strict(
  {
    id,
    purpose: { enum: ['sign', 'authenticated', 'anonymous', 'symmetric'] },
    type: { enum: ['public', 'secret'] },
    keyHex: { type: 'string', pattern: '^[0-9a-fA-F]+$' },
    metadata: { type: 'object', properties: { description: str } },
  },
  ['id', 'purpose', 'type', 'keyHex'],
);

/** A signer: `"id"` (legacy) or `{ id, description? }`. Object keywords apply only to objects. */
const signer = {
  type: ['string', 'object'],
  minLength: 1,
  additionalProperties: false,
  required: ['id'],
  properties: { id, description: str },
};

const packaging = strict(
  {
    packageId: id,
    packagerIdentities: { type: 'array', items: id },
    requiredSigners: { type: 'array', items: signer },
    additionalSigners: { type: 'array', items: signer },
    requiredAdditionalSignerCount: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER },
    // Issue 29 §1 (agent README "Rollback"): the release sequence floor, the operator's deliberate downgrade and
    // the clock skew allowed past a package's expiresAt.
    minimumSequence: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER },
    allowDowngradeTo: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER },
    clockSkewSeconds: { type: 'integer', minimum: 0, maximum: MAX_CLOCK_SKEW_SECONDS },
  },
  ['packageId'],
);

const hostCommon = {
  host: str,
  headers: stringMap,
  authenticationHost: SB,
  data: free,
  httpTimeout: ms,
  transport: { enum: ['http', 'inProc'] },
  inProcServerId: id,
  inProcDeploymentId: id,
};

const host = {
  ...strict(
    {
      id,
      ...hostCommon,
      allowList: {
        type: 'array',
        items: strict({ method: { enum: HTTP_METHODS }, uriPattern: str }, ['method', 'uriPattern']),
      },
    },
    ['id'],
  ),
  allOf: [
    {
      description: 'an http host needs host',
      if: { not: { required: ['transport'], properties: { transport: { const: 'inProc' } } } },
      then: { required: ['host'] },
    },
    {
      description: 'an inProc host needs inProcServerId',
      if: { required: ['transport'], properties: { transport: { const: 'inProc' } } },
      then: { required: ['inProcServerId'] },
    },
  ],
};

/** Legacy `hosts` map entry: lowercase `allowlist` of `[method, regex]` tuples (docs/interfaces.md §3.6). */
const legacyHost = strict({
  ...hostCommon,
  allowlist: {
    type: 'array',
    items: { type: 'array', minItems: 2, maxItems: 2, items: [{ enum: HTTP_METHODS }, str] },
  },
});

const asset = strict({ packagedAssetFileId: id }, ['packagedAssetFileId']);
/** The older spelling also takes the asset's `allowFileAccess` id alone, as reference bootstraps write it. */
const legacyAsset = { anyOf: [id, asset] };

const server = {
  ...strict(
    {
      id,
      port: { type: 'integer', minimum: 1, maximum: 65535 },
      bindAddress: str,
      tcp: SB,
      inProcOnly: SB,
      serveFromPackagedAsset: asset,
      servePackagedAsset: legacyAsset,
    },
    ['id'],
  ),
  if: { required: ['inProcOnly'], properties: { inProcOnly: { enum: [true, 'true'] } } },
  then: { description: 'port is not allowed with inProcOnly', not: { required: ['port'] } },
  else: { required: ['port'] },
};

const fileAccess = strict(
  { id, directoryOrFile: id, patterns: strings, READ: SB, LIST: SB, WRITE: SB, DELETE: SB, required: SB },
  ['id', 'directoryOrFile'],
);

const isTrue = { enum: [true, 'true'] };

const deploymentAccess = {
  ...strict(
    {
      id,
      access: { enum: ['call', 'receive'] },
      deploymentIds: { type: 'array', items: id },
      deploymentId: id,
      anyDeployment: SB,
      startupWaitTimeoutMs: ms,
    },
    ['id', 'access'],
  ),
  allOf: [
    {
      description: 'anyDeployment is for receive entries and excludes deploymentIds and deploymentId',
      if: { required: ['anyDeployment'], properties: { anyDeployment: isTrue } },
      then: {
        properties: { access: { const: 'receive' } },
        not: { anyOf: [{ required: ['deploymentIds'] }, { required: ['deploymentId'] }] },
      },
    },
    {
      description: 'startupWaitTimeoutMs is for call entries',
      if: { required: ['startupWaitTimeoutMs'] },
      then: { properties: { access: { const: 'call' } } },
    },
  ],
};

const output = strict({
  id,
  enabled: SB,
  type: str,
  typeProperties: free,
  routingToken: str,
  outputUrl: str,
  outputAuthorization: str,
  persistenceRoot: str,
});

const errorHandling = strict({
  enableLocalLogging: SB,
  metrics: output,
  logs: output,
  redactionPatterns: strings,
});

const workflowBlock = strict({
  errorHandling,
  metricOutput: output,
  outputs: { type: 'array', items: output },
  shutdownTimeout: ms,
  maxTimerConcurrency: { type: ['integer', 'null'], minimum: 1 },
  timers: strict({ staggerPct: { type: 'number', minimum: 0, maximum: 100 } }),
});

const record = strict(
  {
    deploymentId: id,
    remoteConfiguration: id,
    enabled: SB,
    agentPrivateKey: str,
    persistenceRoot: str,
    packaging,
    keys: { type: 'array', items: key },
    licensing: strict({ licenseHost: str, licenseHostPoolId: str }),
    remoteConfigurationAuth: str,
    remoteConfigurationHeaders: stringMap,
    frequency: ms,
    remoteConfigurationTimeout: ms,
    deferLoading: SB,
    startupPriority: { type: 'number' },
    // Ours (SPEC.md §8.4): time limit of one processor run, ms; at most the engine's MAX_LIMITS.timeMs (10 min).
    scriptTimeoutMs: { type: 'integer', minimum: 1, maximum: MAX_SCRIPT_TIMEOUT_MS },
    // Switches back to the reference agent's behaviour where this project deliberately differs (SPEC.md §8.3).
    referenceBehaviour: strict({ httpRequestEnvelope: SB }),
    errorHandling,
    workflow: workflowBlock,
    agentControl: strict({ workflowCanShutdownAgent: SB }),
    allowExternalHostAccess: { type: 'array', items: host },
    hosts: { type: 'object', additionalProperties: legacyHost },
    allowHttpServerAccess: { type: 'array', items: server },
    allowFileAccess: { type: 'array', items: fileAccess },
    allowDeploymentAccess: { type: 'array', items: deploymentAccess },
    // Ours (SPEC.md §8.5): grants the deployment the agent's packager capability (`context.packager()`).
    allowPackagerAccess: SB,
    reloadTimeout: ms,
    data: free,
  },
  ['deploymentId', 'remoteConfiguration'],
);

/** The JSON Schema of a bootstrap (input form: array of records, at least one), as a plain object for reuse. */
export const BOOTSTRAP_SCHEMA = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  $id: 'urn:org:workflow-compiler:bootstrap:v1',
  title: 'bootstrap',
  type: 'array',
  minItems: 1,
  items: record,
} as const;
