import {
  BOOTSTRAP_ENCRYPT_REQUEST_SCHEMA,
  OPERATION_SCOPES,
  PACKAGE_ENVELOPE_REQUEST_SCHEMA,
  PACKAGE_REQUEST_SCHEMA,
  STRING_ENCRYPT_REQUEST_SCHEMA,
  type PackagerOperation,
} from '@org/packager';
import { MAX_CLOCK_SKEW_SECONDS } from '@org/oapp-format';
import { appVersion } from './startup.js';

const PROBLEM = {
  type: 'object',
  description:
    'RFC 9457 problem (ADR 0004). `code` is stable; `errors` names failing fields by JSON pointer.',
  required: ['type', 'title', 'status', 'code'],
  properties: {
    type: { type: 'string' },
    title: { type: 'string' },
    status: { type: 'integer' },
    detail: { type: 'string' },
    instance: { type: 'string' },
    code: { type: 'string' },
    errors: {
      type: 'array',
      items: {
        type: 'object',
        required: ['pointer', 'detail'],
        properties: { pointer: { type: 'string' }, detail: { type: 'string' } },
      },
    },
  },
} as const;

const problems = (...statuses: number[]) =>
  Object.fromEntries(
    statuses.map((s) => [
      String(s),
      {
        description: 'problem',
        content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
      },
    ]),
  );

const HEX = { type: 'string', pattern: '^[0-9a-f]+$' } as const;

const form = (bodySchema: string, stream: string) => ({
  required: true,
  content: {
    'multipart/form-data': {
      schema: {
        type: 'object',
        required: ['body', 'stream'],
        properties: {
          // The part is JSON text (encoding below), so its schema is the parsed value's (OpenAPI 3.1 §4.8.14).
          body: {
            $ref: `#/components/schemas/${bodySchema}`,
            description: `JSON text of ${bodySchema} (a text field, first).`,
          },
          stream: { type: 'string', format: 'binary', description: stream },
        },
      },
      encoding: {
        body: { contentType: 'application/json' },
        stream: { contentType: 'application/octet-stream' },
      },
    },
  },
});

const jsonDocument = (what: string) => ({
  required: true,
  content: {
    'application/json': { schema: { type: 'object', description: what } },
    'multipart/form-data': {
      schema: {
        type: 'object',
        required: ['stream'],
        properties: { stream: { type: 'string', format: 'binary', description: `${what} (the only part)` } },
      },
    },
  },
});

const json = (schema: object, description = 'OK') => ({
  description,
  content: { 'application/json': { schema } },
});
const bytes = (description: string) => ({
  description,
  content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } },
});
const text = (description: string) => ({
  description,
  content: {
    'text/plain': { schema: { type: 'string' } },
    'application/octet-stream': { schema: { type: 'string' } },
  },
});

const UPLOAD_ERRORS = problems(400, 406, 413, 415, 422, 500);

export const KEY_GEN_RESPONSE_SCHEMA = {
  type: 'object',
  required: ['ok', 'purpose', 'encoding', 'keyPair'],
  additionalProperties: false,
  properties: {
    ok: { const: true },
    purpose: { enum: ['sign', 'authenticated', 'anonymous', 'symmetric'] },
    encoding: { const: 'hex' },
    keyPair: {
      type: 'object',
      required: ['publicKeyHex', 'secretKeyHex'],
      additionalProperties: false,
      properties: { publicKeyHex: { oneOf: [HEX, { type: 'null' }] }, secretKeyHex: HEX },
    },
  },
} as const;

export const HASH_RESPONSE_SCHEMA = {
  type: 'object',
  required: ['ok', 'hash', 'algorithm'],
  additionalProperties: false,
  properties: {
    ok: { const: true },
    hash: { type: 'string', pattern: '^[0-9a-f]{64}$' },
    algorithm: { const: 'sha-256' },
  },
} as const;

export const WORKFLOW_RESPONSE_SCHEMA = {
  type: 'object',
  required: ['ok', 'workflow'],
  properties: {
    ok: { const: true },
    workflow: { type: 'object', required: ['workflows'], properties: { workflows: { type: 'array' } } },
    resources: {
      type: 'array',
      items: {
        type: 'object',
        required: ['path', 'bytes', 'references'],
        additionalProperties: false,
        properties: { path: { type: 'string' }, bytes: { type: 'integer' }, references: { type: 'integer' } },
      },
    },
  },
} as const;

export const INSPECT_RESPONSE_SCHEMA = {
  type: 'object',
  description: 'oapp-format `PackageInspection` plus `ok`.',
  required: [
    'ok',
    'format',
    'formatVersion',
    'kind',
    'packageId',
    'sequence',
    'createdAt',
    'expiresAt',
    'rollback',
    'content',
    'packager',
    'recipients',
    'signatures',
    'payload',
  ],
  properties: {
    ok: { const: true },
    format: { enum: ['oapp/v1', 'oapp/v2'] },
    version: { type: 'integer', description: 'The frame version (the same as `formatVersion`).' },
    formatVersion: {
      enum: [1, 2],
      description: 'The frame version: 2, or 1 for a package of the older format.',
    },
    kind: { enum: ['app', 'bootstrap'] },
    packageId: { type: 'string' },
    sequence: {
      oneOf: [{ type: 'integer', minimum: 0 }, { type: 'null' }],
      description:
        'The release sequence (signed; agents refuse an older one than they accepted); `null` in format 1.',
    },
    createdAt: { type: 'string' },
    expiresAt: {
      oneOf: [{ type: 'string' }, { type: 'null' }],
      description:
        'When agents stop accepting the package (plus their clock skew); `null`: it does not expire.',
    },
    rollback: {
      description:
        'What an agent’s rollback check would decide against the query’s `minimumSequence`, `newest`, `now` and ' +
        '`clockSkewSeconds`, as `oapp inspect --newest/--now` shows it: a verdict with `code` and `message` ' +
        'null, or `refused` with the code and message the agent would refuse the package with. `null` when the ' +
        'query names none of them. Inspection decides nothing: a refusal is still a 200. When the package’s ' +
        'sequence equals `newest`’s, `contentCompared` says whether its content digest was compared with the ' +
        'one given (`newest=SEQUENCE:SHA256`); `false`: no digest was given, so the verdict means only that the ' +
        'sequence is the same (an agent that accepted other content under it would refuse the package, ' +
        '`POLICY_SEQUENCE_REUSED`). Absent when the sequences differ or no `newest` is given.',
      oneOf: [
        { type: 'null' },
        {
          type: 'object',
          required: ['verdict', 'code', 'message'],
          properties: {
            verdict: { enum: ['first', 'newer', 'same', 'allowed-downgrade', 'unversioned', 'refused'] },
            code: { oneOf: [{ type: 'string' }, { type: 'null' }] },
            message: { oneOf: [{ type: 'string' }, { type: 'null' }] },
            contentCompared: { type: 'boolean' },
          },
        },
      ],
    },
    content: { type: 'object' },
    headerSha256: HEX,
    packager: {
      type: 'object',
      required: ['publicKeyHex', 'fingerprint'],
      properties: { publicKeyHex: HEX, fingerprint: { type: 'string' } },
    },
    recipients: {
      type: 'array',
      items: { type: 'object', required: ['fingerprint'], properties: { fingerprint: { type: 'string' } } },
    },
    signatures: {
      type: 'array',
      items: {
        type: 'object',
        required: ['publicKeyHex', 'fingerprint', 'signText', 'valid'],
        properties: {
          publicKeyHex: HEX,
          fingerprint: { type: 'string' },
          signText: { type: 'string' },
          valid: { type: 'boolean' },
        },
      },
    },
    license: { oneOf: [{ type: 'object' }, { type: 'null' }] },
    envelope: { type: 'array' },
    payload: { type: 'object' },
  },
} as const;

export const HEALTH_RESPONSE_SCHEMA = {
  type: 'object',
  required: ['ok'],
  additionalProperties: false,
  properties: { ok: { const: true } },
} as const;

export const READY_RESPONSE_SCHEMA = {
  type: 'object',
  required: ['ok', 'status'],
  additionalProperties: false,
  properties: { ok: { type: 'boolean' }, status: { enum: ['starting', 'ready', 'draining'] } },
} as const;

/**
 * Every operation: an id, its security and its responses. An operation of @org/packager other than `health` takes
 * the caller token scheme with its scope (ADR 0140), and may answer 401/403 when tokens are configured; the rest
 * (`/health`, `/ready`, `/metrics`, `/openapi.json`, `/inspect`) are open.
 */
const op = <T extends { responses: object }>(
  operationId: string,
  operation: T,
  packagerOperation?: Exclude<PackagerOperation, 'health'>,
) => {
  if (packagerOperation === undefined) return { operationId, security: [] as const, ...operation };
  const scope = OPERATION_SCOPES[packagerOperation];
  return {
    operationId,
    security: [{ callerToken: [scope] }],
    ...operation,
    responses: { ...operation.responses, ...problems(401, 403) },
  };
};

/** The query parameters of /workflow-inspect (@org/packager's INSPECT_QUERY_PARAMETERS), each optional. */
const INSPECT_PARAMETERS = [
  {
    name: 'minimumSequence',
    in: 'query',
    required: false,
    description: 'The deployment’s floor (bootstrap `packaging.minimumSequence`), decimal digits.',
    schema: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER },
  },
  {
    name: 'newest',
    in: 'query',
    required: false,
    description:
      'The newest release the agent accepted for this package id: `SEQUENCE` or `SEQUENCE:SHA256` (its content ' +
      'sha256, 64 hex digits), as `oapp inspect --newest` takes it. Without the digest, a package of that very ' +
      'sequence is judged with its own digest and its `rollback` carries `contentCompared: false`: give the ' +
      'digest to learn whether it is the release the agent accepted.',
    schema: { type: 'string', pattern: '^[0-9]{1,16}(:[0-9a-fA-F]{64})?$' },
  },
  {
    name: 'now',
    in: 'query',
    required: false,
    description: 'The agent’s clock for the expiry check (default: the packager’s clock), a UTC time.',
    schema: {
      type: 'string',
      pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]{3})?Z$',
      examples: ['2027-01-31T12:00:00Z'],
    },
  },
  {
    name: 'clockSkewSeconds',
    in: 'query',
    required: false,
    description: 'Skew allowed past `expiresAt` (bootstrap `packaging.clockSkewSeconds`; default 300).',
    schema: { type: 'integer', minimum: 0, maximum: MAX_CLOCK_SKEW_SECONDS },
  },
] as const;

/** A request the method table refuses: 405 (and 404 for a path outside the document). */
const NOT_ALLOWED = problems(405);

/** The OpenAPI 3.1 document served at GET /openapi.json. test/openapi.test.ts checks it against the routes. */
export const OPENAPI_DOCUMENT = {
  openapi: '3.1.0',
  info: {
    title: 'oapp packager API',
    // One source: the service's package.json, as `--version` prints it (issue 27: this said 0.1.0 at 1.0.0-rc.x).
    version: appVersion(import.meta.url),
    license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    description:
      'Compiles, signs and encrypts workflow packages; encrypts bootstraps and -2/ strings. Errors are ' +
      'application/problem+json with a stable `code`. Caller tokens are optional: when the service is configured ' +
      'with them (README "Caller tokens"), every operation but /health, /ready, /metrics, /openapi.json and /inspect needs ' +
      '`Authorization: Bearer <token>` with the scope the operation names (401 REQUEST_UNAUTHENTICATED, 403 ' +
      'REQUEST_FORBIDDEN); without them, the service binds only to loopback unless told otherwise. ' +
      'Every answer carries `X-Request-Id` (the inbound one when it is 1 to 128 characters of ' +
      '`[A-Za-z0-9._:-]`, else a fresh UUID).',
  },
  servers: [{ url: 'http://127.0.0.1:39575' }],
  paths: {
    '/workflow-package': {
      post: op(
        'workflowPackage',
        {
          summary: 'Compile a workflow and package it: sign by every signer, encrypt for every recipient.',
          requestBody: form('PackageRequest', 'the workflow JSON'),
          responses: { '200': bytes('the .oapp package'), ...UPLOAD_ERRORS },
        },
        'workflow-package',
      ),
    },
    '/bootstrap-encrypt': {
      post: op(
        'bootstrapEncrypt',
        {
          summary: 'Validate a bootstrap, then encrypt it for one or more recipients.',
          requestBody: form('BootstrapEncryptRequest', 'the bootstrap JSON'),
          responses: {
            '200': text('Base64 text of the encrypted bootstrap, as the accepted type'),
            ...UPLOAD_ERRORS,
          },
        },
        'bootstrap-encrypt',
      ),
    },
    '/string-encrypt': {
      post: op(
        'stringEncrypt',
        {
          summary: 'Encrypt a string for exactly one recipient.',
          requestBody: form('StringEncryptRequest', 'the plaintext bytes (at most 64 KiB)'),
          responses: { '200': text('`-2/` + Base64'), ...UPLOAD_ERRORS },
        },
        'string-encrypt',
      ),
    },
    '/workflow-compile': {
      post: op(
        'workflowCompile',
        {
          summary: 'Validate, strip comments, inline resources.',
          requestBody: jsonDocument('the workflow'),
          responses: { '200': json(WORKFLOW_RESPONSE_SCHEMA), ...UPLOAD_ERRORS },
        },
        'workflow-compile',
      ),
    },
    '/workflow-hash': {
      post: op(
        'workflowHash',
        {
          summary: 'SHA-256 of the RFC 8785 form of the compiled workflow, lowercase hex.',
          requestBody: jsonDocument('the workflow'),
          responses: { '200': json(HASH_RESPONSE_SCHEMA), ...UPLOAD_ERRORS },
        },
        'workflow-hash',
      ),
    },
    '/workflow-inspect': {
      post: op(
        'workflowInspect',
        {
          summary: 'Parse a package and verify its signatures, without any secret key.',
          description:
            'With any of the query parameters, the answer’s `rollback` is the verdict an agent with that floor, ' +
            'remembered newest release, clock and skew would give (no key is needed). Each parameter may appear ' +
            'once; a malformed or repeated value, or any other query parameter, is 422 REQUEST_FIELD_INVALID ' +
            'naming it (judged before the package is read).',
          parameters: INSPECT_PARAMETERS,
          requestBody: {
            required: true,
            content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } },
          },
          responses: { '200': json(INSPECT_RESPONSE_SCHEMA), ...UPLOAD_ERRORS },
        },
        'workflow-inspect',
      ),
    },
    '/package-envelope': {
      post: op(
        'packageEnvelope',
        {
          summary: 'Open an existing package under the caller’s policy, add endorsements, re-encrypt.',
          requestBody: form('PackageEnvelopeRequest', 'the existing .oapp'),
          responses: { '200': bytes('the new .oapp package'), ...UPLOAD_ERRORS, ...problems(403) },
        },
        'package-envelope',
      ),
    },
    '/build-workflows': {
      post: op(
        'buildWorkflows',
        {
          summary:
            'Build one workflow from a manifest (sourceWorkflow files are read from the resource directories).',
          requestBody: jsonDocument('the manifest'),
          responses: { '200': json(WORKFLOW_RESPONSE_SCHEMA), ...UPLOAD_ERRORS },
        },
        'build-workflows',
      ),
    },
    '/key-gen': {
      get: op(
        'keyGen',
        {
          summary: 'Generate a key pair (hex). Responses are Cache-Control: no-store.',
          parameters: [
            {
              name: 'purpose',
              in: 'query',
              required: true,
              schema: { enum: ['sign', 'authenticated', 'anonymous', 'symmetric', 'box', 'secretbox'] },
            },
          ],
          responses: { '200': json(KEY_GEN_RESPONSE_SCHEMA), ...problems(400, 406) },
        },
        'key-gen',
      ),
    },
    '/inspect': {
      get: op('getInspectPage', {
        summary:
          'The inspection page: inspects and verifies a .oapp in the browser, nothing uploaded (ADR 0146); open ' +
          'whatever the caller tokens (it is static and holds no secret).',
        responses: {
          '200': {
            description:
              'The page (one HTML file, its script and style inline), with its Content-Security-Policy ' +
              "(connect-src 'none'), X-Frame-Options: DENY, nosniff and an ETag",
            content: { 'text/html': { schema: { type: 'string' } } },
          },
          '304': { description: 'Not modified: If-None-Match named the page ETag' },
          ...NOT_ALLOWED,
        },
      }),
    },
    '/health': {
      get: op('getHealth', {
        summary: 'Liveness: the process answers.',
        responses: { '200': json(HEALTH_RESPONSE_SCHEMA), ...NOT_ALLOWED },
      }),
    },
    '/ready': {
      get: op('getReady', {
        summary: 'Readiness: 200 once listening, 503 while starting or draining.',
        responses: {
          '200': json(READY_RESPONSE_SCHEMA),
          '503': json(READY_RESPONSE_SCHEMA, 'starting or draining'),
          ...NOT_ALLOWED,
        },
      }),
    },
    '/metrics': {
      get: op('getMetrics', {
        summary: 'Prometheus metrics (text exposition format 0.0.4).',
        responses: {
          '200': {
            description: 'OK',
            content: { 'text/plain': { schema: { type: 'string' } } },
          },
          ...NOT_ALLOWED,
        },
      }),
    },
    '/openapi.json': {
      get: op('getOpenApi', {
        summary: 'This document.',
        responses: { '200': json({ type: 'object' }), ...NOT_ALLOWED },
      }),
    },
  },
  components: {
    securitySchemes: {
      callerToken: {
        type: 'http',
        scheme: 'bearer',
        description:
          'A caller token (ADR 0140); the service holds only its SHA-256 hash. The scopes listed on an operation ' +
          '(package, encrypt, inspect, key-gen) are the ones the token must hold.',
      },
    },
    schemas: {
      Problem: PROBLEM,
      PackageRequest: PACKAGE_REQUEST_SCHEMA,
      BootstrapEncryptRequest: BOOTSTRAP_ENCRYPT_REQUEST_SCHEMA,
      StringEncryptRequest: STRING_ENCRYPT_REQUEST_SCHEMA,
      PackageEnvelopeRequest: PACKAGE_ENVELOPE_REQUEST_SCHEMA,
    },
  },
} as const;
