import type { IncomingMessage } from 'node:http';
import type { ReadUploadOptions } from '@org/multipart-limits';
import parseUrl from 'parseurl';
import { parseBody, type BodyValidator } from './body-json.js';
import { inspectFreshnessOf } from './inspect-query.js';
import { parseKeyring, type Keyring } from './keyring.js';
import { resolveLimits, type Limits } from './limits.js';
import { JSON_TYPE, negotiate, OCTET_STREAM } from './negotiate.js';
import {
  PACKAGER_OPERATIONS,
  type KeyedForm,
  type OperationEnv,
  type OperationResult,
  type PackagerDirs,
  type PackagerOperation,
} from './operation.js';
import {
  bootstrapEncrypt,
  checkBootstrapEncryptRequest,
  exactlyOneRecipient,
  stringEncrypt,
  TEXT_OFFERS,
  validateBootstrapEncryptRequest,
  validateStringEncryptRequest,
} from './operations/encrypt.js';
import { health, keyGen, keyGenPurpose } from './operations/key-gen.js';
import { packageEnvelope, validatePackageEnvelopeRequest, workflowInspect } from './operations/packages.js';
import {
  checkPackageRequest,
  validatePackageRequest,
  workflowPackage,
} from './operations/workflow-package.js';
import { buildWorkflowsFromManifest, workflowCompile, workflowHash } from './operations/workflows.js';
import type { KeyInput } from './request-schemas.js';
import { readForm, readJsonDocument, readOctets, uploadOptionsByPath, uploadOptionsFor } from './upload.js';

/** An operation's place in the HTTP API and the headers each of its answers carries. */
export interface OperationSpec {
  readonly name: PackagerOperation;
  readonly method: 'GET' | 'POST';
  /** Its path in the HTTP API (`/` + its name). */
  readonly path: string;
  /**
   * Headers every answer of the operation carries, problems included (lower-case names): `vary: Accept` where
   * the answer is negotiated, `cache-control: no-store` for key-gen. A front-end sets them before the request is
   * read, so a refusal of the read carries them too.
   */
  readonly headers: Readonly<Record<string, string>>;
}

/** A request read for its operation: run it once, then wipe it, whatever the outcome. */
export interface ReadRequest {
  readonly operation: PackagerOperation;
  /**
   * Runs the operation. Rejects with a coded error for a request the operation refuses (its status in
   * `STATUS_BY_CODE`); any other rejection is a failure (a generic 500).
   */
  perform(): Promise<OperationResult>;
  /** Zeroes the `stream` part's bytes (or the whole body) and every parsed key. Idempotent. */
  wipe(): void;
}

/** The operations of one set of limits: what every front-end reads and runs requests with. */
export interface PackagerOperations {
  readonly limits: Readonly<Limits>;
  /** Upload options by path (for a `checkContinue` listener that judges an upload from its headers). */
  readonly uploads: ReadonlyMap<string, ReadUploadOptions>;
  /** @throws RangeError for a name that is not one of {@link PACKAGER_OPERATIONS}. */
  spec(operation: string): OperationSpec;
  /**
   * Reads a request for `operation` as the HTTP API reads it on the operation's path: `Accept` first, then the
   * media type, the upload and its limits, the strict-JSON `body` part, its schema, its keys. The method is the
   * caller's routing. `multipartByteLimit`, when given, replaces the cap of a multipart upload.
   * @throws a coded error (RequestError, UploadError, CryptoError, …) for a request it refuses.
   */
  read(
    operation: string,
    req: IncomingMessage,
    dirs: PackagerDirs,
    multipartByteLimit?: number,
  ): Promise<ReadRequest>;
  /**
   * The upload options `read` applies for `operation` (with `multipartByteLimit` as there), for a `checkContinue`
   * listener that judges an upload from its headers; undefined for an operation that takes no upload.
   * @throws RangeError for an unknown operation or a limit that is not a whole number of bytes.
   */
  uploadOptions(operation: string, multipartByteLimit?: number): ReadUploadOptions | undefined;
}

/** What one operation's reader gets. */
interface ReadContext {
  env: OperationEnv;
  upload: ReadUploadOptions;
}

interface Entry extends OperationSpec {
  /** Its upload options, when it takes a body. */
  readonly upload: ReadUploadOptions | undefined;
  read(req: IncomingMessage, ctx: ReadContext): Promise<ReadRequest>;
}

const NO_UPLOAD: ReadUploadOptions = {};
const VARY = Object.freeze({ vary: 'Accept' });
const NONE = Object.freeze({});

/** A keyed `body` + `stream` operation: what {@link keyedForm} needs besides the request. */
interface FormOperation<T> {
  offers: readonly string[];
  validate: BodyValidator<T>;
  /** Checks of the validated request that come before its keys are parsed. */
  check?: (request: T) => void;
  run: (form: KeyedForm<T>, env: OperationEnv) => Promise<OperationResult>;
}

/**
 * The sequence every `body` + `stream` operation with keys shares (ADR 0005, 0007): negotiate `Accept`, read the
 * form, parse and validate the `body` part, run the operation's own checks, parse every key. The `stream` part is
 * read when the operation asks for it (after its keys are resolved); the parsed keys and the `stream` part's
 * bytes are zeroed by `wipe`, and at once when the read itself fails.
 */
function keyedForm<T extends { keys: readonly KeyInput[] }>(
  name: PackagerOperation,
  op: FormOperation<T>,
): (req: IncomingMessage, ctx: ReadContext) => Promise<ReadRequest> {
  return async (req, { env, upload }) => {
    const type = negotiate(req, op.offers);
    const form = await readForm(req, upload);
    let ring: Keyring;
    let request: T;
    try {
      request = op.validate(parseBody(form.body, env.limits.bodyFieldBytes));
      op.check?.(request);
      ring = parseKeyring(request.keys);
    } catch (err) {
      form.wipe();
      throw err;
    }
    return {
      operation: name,
      perform: () => op.run({ type, request, ring, content: form.content }, env),
      wipe: () => {
        ring.wipe();
        form.wipe();
      },
    };
  };
}

/** A request whose whole body was read (`bytes`): zeroed by `wipe`. */
function wholeBody(
  name: PackagerOperation,
  bytes: Uint8Array,
  run: (bytes: Uint8Array) => Promise<OperationResult>,
): ReadRequest {
  return { operation: name, perform: () => run(bytes), wipe: () => bytes.fill(0) };
}

/** A JSON document (`application/json`, or the only part of a form) → `run`. */
function jsonDocument(
  name: PackagerOperation,
  run: (source: Uint8Array, env: OperationEnv) => Promise<OperationResult>,
): (req: IncomingMessage, ctx: ReadContext) => Promise<ReadRequest> {
  return async (req, { env, upload }) => {
    negotiate(req, [JSON_TYPE]);
    const source = await readJsonDocument(req, upload);
    return wholeBody(name, source, (bytes) => run(bytes, env));
  };
}

const NOTHING_TO_WIPE = (): void => {};

/** `fn()` as a promise: its value, or its throw as a rejection. */
function settled<T>(fn: () => T): Promise<T> {
  try {
    return Promise.resolve(fn());
  } catch (err) {
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- whatever was thrown, unchanged
    return Promise.reject(err);
  }
}

/** What each operation reads, in the order of {@link PACKAGER_OPERATIONS}. */
function entries(uploads: ReadonlyMap<string, ReadUploadOptions>): Entry[] {
  const post = (name: PackagerOperation, read: Entry['read'], headers = VARY): Entry => ({
    name,
    method: 'POST',
    path: `/${name}`,
    headers,
    upload: uploadOptionsFor(uploads, `/${name}`),
    read,
  });
  const get = (name: PackagerOperation, read: Entry['read'], headers: Entry['headers']): Entry => ({
    name,
    method: 'GET',
    path: `/${name}`,
    headers,
    upload: undefined,
    read,
  });
  return [
    post(
      'workflow-package',
      keyedForm('workflow-package', {
        offers: [OCTET_STREAM],
        validate: validatePackageRequest,
        check: checkPackageRequest,
        run: workflowPackage,
      }),
    ),
    post(
      'bootstrap-encrypt',
      keyedForm('bootstrap-encrypt', {
        offers: TEXT_OFFERS,
        validate: validateBootstrapEncryptRequest,
        check: checkBootstrapEncryptRequest,
        run: bootstrapEncrypt,
      }),
    ),
    post(
      'string-encrypt',
      keyedForm('string-encrypt', {
        offers: TEXT_OFFERS,
        validate: validateStringEncryptRequest,
        check: exactlyOneRecipient,
        run: stringEncrypt,
      }),
    ),
    post('workflow-compile', jsonDocument('workflow-compile', workflowCompile)),
    post('workflow-hash', jsonDocument('workflow-hash', workflowHash)),
    post('workflow-inspect', async (req, { upload }) => {
      negotiate(req, [JSON_TYPE]);
      // The query before the upload: a bad parameter is refused without reading the package.
      const freshness = inspectFreshnessOf(parseUrl(req)?.query as string | null | undefined);
      return wholeBody('workflow-inspect', await readOctets(req, upload), (bytes) =>
        workflowInspect(bytes, freshness),
      );
    }),
    post(
      'package-envelope',
      keyedForm('package-envelope', {
        offers: [OCTET_STREAM],
        validate: validatePackageEnvelopeRequest,
        run: packageEnvelope,
      }),
    ),
    post('build-workflows', jsonDocument('build-workflows', buildWorkflowsFromManifest)),
    get(
      'key-gen',
      (req) =>
        settled(() => {
          negotiate(req, [JSON_TYPE]);
          // The query as Express's `req.query` reads it: parseurl's, then node's querystring (keyGenPurpose).
          const purpose = keyGenPurpose(parseUrl(req)?.query as string | null | undefined);
          return {
            operation: 'key-gen',
            perform: () => settled(() => keyGen(purpose)),
            wipe: NOTHING_TO_WIPE,
          };
        }),
      Object.freeze({ 'cache-control': 'no-store', vary: 'Accept' }),
    ),
    get(
      'health',
      () => settled(() => ({ operation: 'health', perform: () => settled(health), wipe: NOTHING_TO_WIPE })),
      NONE,
    ),
  ];
}

function checkDirs(dirs: PackagerDirs): void {
  const list = (v: unknown) => Array.isArray(v) && v.every((d) => typeof d === 'string');
  if (typeof dirs !== 'object' || dirs === null || !list(dirs.resourceDirs) || !list(dirs.workflowSourceDirs))
    throw new TypeError('dirs must be { resourceDirs: string[], workflowSourceDirs: string[] }');
}

/** An operation's upload options, its multipart cap replaced by `multipartByteLimit` when given. */
function uploadOf(entry: Entry, multipartByteLimit: number | undefined): ReadUploadOptions | undefined {
  const upload = entry.upload;
  if (multipartByteLimit === undefined || upload === undefined) return upload;
  if (!Number.isSafeInteger(multipartByteLimit) || multipartByteLimit < 0)
    throw new RangeError('multipartByteLimit must be a whole number of bytes, 0 or more');
  return upload.multipartByteLimit === undefined ? upload : { ...upload, multipartByteLimit };
}

/**
 * The operations with `limits` (each left out: its default, {@link DEFAULT_LIMITS}).
 * @throws TypeError / RangeError for a limit that is not a whole number of bytes.
 */
export function createPackagerOperations(options: { limits?: Partial<Limits> } = {}): PackagerOperations {
  const limits = Object.freeze(resolveLimits(options.limits));
  const uploads = uploadOptionsByPath(limits);
  const byName = new Map<string, Entry>(entries(uploads).map((e) => [e.name, e]));
  const entryOf = (operation: string): Entry => {
    const entry = byName.get(operation);
    if (entry === undefined)
      throw new RangeError(
        `operation "${String(operation).slice(0, 64)}" is not one of ${PACKAGER_OPERATIONS.join(', ')}`,
      );
    return entry;
  };
  return {
    limits,
    uploads,
    uploadOptions: (operation, multipartByteLimit) => uploadOf(entryOf(operation), multipartByteLimit),
    spec(operation) {
      const { name, method, path, headers } = entryOf(operation);
      return { name, method, path, headers };
    },
    read(operation, req, dirs, multipartByteLimit) {
      let entry: Entry;
      let upload: ReadUploadOptions;
      try {
        entry = entryOf(operation);
        checkDirs(dirs);
        upload = uploadOf(entry, multipartByteLimit) ?? NO_UPLOAD;
      } catch (err) {
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- a TypeError or RangeError
        return Promise.reject(err);
      }
      const env: OperationEnv = {
        limits,
        resourceDirs: dirs.resourceDirs,
        workflowSourceDirs: dirs.workflowSourceDirs,
      };
      return entry.read(req, { env, upload });
    },
  };
}
