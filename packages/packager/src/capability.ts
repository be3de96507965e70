import type { IncomingMessage } from 'node:http';
import { PROBLEM_HEADERS } from '@org/http-problem';
import type { ReadUploadOptions } from '@org/multipart-limits';
import { createTokenCheck, parseTokenHashes, type TokenCheck } from './auth.js';
import { RequestError } from './errors.js';
import type { Limits } from './limits.js';
import { PACKAGER_OPERATIONS, type OperationResult, type PackagerDirs } from './operation.js';
import { createPackagerOperations, type OperationSpec, type ReadRequest } from './operations.js';
import { internalProblemBody, isCodedError, problemBody } from './problems.js';

export type { PackagerDirs } from './operation.js';

/** One answer, ready to send. */
export interface PackagerAnswer {
  status: number;
  /**
   * Lower-case names; always includes content-type and `x-content-type-options: nosniff` (as every answer of the
   * Express service). Problems: application/problem+json, plus Allow/Accept-Post where the Express service sends them.
   */
  headers: Record<string, string>;
  body: Uint8Array;
  /** Set only for an uncoded (internal) error answered with the generic 500 problem: for the host's log, never sent. */
  failure?: unknown;
}

/** A request read for its operation and held by the host until it has run. */
export interface HeldPackagerRequest {
  readonly operation: string;
  /**
   * Runs the operation once. Never rejects: a coded error becomes its problem answer, anything else the generic
   * 500 problem (failure set).
   */
  run(requestId: string): Promise<PackagerAnswer>;
  /** Zeroes every buffer of the request (body part bytes, stream part, parsed keys). Idempotent. */
  wipe(): void;
}

/** The packager as a host grants it: read a request for an operation, run it, or answer a read's refusal. */
export interface PackagerCapability {
  readonly operations: readonly string[];
  /**
   * Reads one HTTP request for `operation` as the Express service reads it on that operation's path.
   * `multipartByteLimit`, when given, replaces the cap of the multipart upload (the step's multiPartUploadByteLimit).
   * Rejects with the same coded errors the Express service answers (turn them into the answer with `answer`).
   */
  read(
    operation: string,
    req: IncomingMessage,
    dirs: PackagerDirs,
    multipartByteLimit?: number,
  ): Promise<HeldPackagerRequest>;
  /** The answer the Express service gives for this error (coded → its problem; else the generic 500 problem with failure set). */
  answer(err: unknown, requestId: string): PackagerAnswer;
  /**
   * The upload options an `Expect: 100-continue` request for `operation` is judged by from its headers alone, as the
   * Express service judges it before `100 Continue` (S8); undefined for an operation that takes no upload. A refusal
   * (an UploadError) is answered with `answer`, as a read's.
   * @throws RangeError for an unknown operation or a limit that is not a whole number of bytes.
   */
  uploadOptions(operation: string, multipartByteLimit?: number): ReadUploadOptions | undefined;
  /**
   * Checks token records as `read` uses them from `dirs.callerTokenHashes` (ADR 0140), so a host refuses a bad
   * configuration at start. `source` names where they came from in the message (never their text).
   * @throws RequestError `REQUEST_TOKEN_CONFIG_INVALID`.
   */
  checkCallerTokens(records: string, source: string): void;
  /**
   * Checks the caller's token for `operation` from the request's `Authorization` header alone, as `read` checks
   * it first (ADR 0140), so a host can refuse an `Expect: 100-continue` request before `100 Continue` (S174).
   * Nothing to check (`dirs.callerTokenHashes` unset or empty, or an open operation): returns.
   * @throws RequestError `REQUEST_UNAUTHENTICATED` (401) / `REQUEST_FORBIDDEN` (403), the errors `read` rejects
   *   with; `REQUEST_TOKEN_CONFIG_INVALID` for bad records; RangeError for an unknown operation.
   */
  authorize(operation: string, authorization: string | readonly string[] | undefined, dirs: PackagerDirs): void;
}

/** Options of {@link createPackagerCapability}. */
export interface PackagerCapabilityOptions {
  /** Limits to change; the others keep their defaults ({@link DEFAULT_LIMITS}). */
  limits?: Partial<Limits>;
}

const encoder = new TextEncoder();

/** Text as its own UTF-8 bytes (never a view of a shared pool: the host may transfer or keep them). */
function bytesOf(body: string | Uint8Array): Uint8Array {
  return typeof body === 'string' ? encoder.encode(body) : body;
}

function lowerCased(headers: Readonly<Record<string, string>> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (headers !== undefined) for (const [k, v] of Object.entries(headers)) out[k.toLowerCase()] = v;
  return out;
}

/**
 * The answer the Express service writes for `err`: its problem with the status of the code table, the error's
 * own headers (`Allow`, `Accept-Post`) and the problem headers, after `opHeaders` (`Vary`, `Cache-Control`) that
 * the service had set before the error; anything uncoded is the generic 500 with `failure` set.
 */
function answerOf(
  err: unknown,
  requestId: string,
  opHeaders: Readonly<Record<string, string>>,
): PackagerAnswer {
  if (isCodedError(err)) {
    const body = problemBody(err, requestId);
    return {
      status: body.status,
      headers: { ...opHeaders, ...lowerCased(err.headers), ...PROBLEM_HEADERS },
      body: encoder.encode(JSON.stringify(body)),
    };
  }
  return {
    status: 500,
    headers: { ...opHeaders, ...PROBLEM_HEADERS },
    body: encoder.encode(JSON.stringify(internalProblemBody(requestId))),
    failure: err,
  };
}

/**
 * The header the Express service sends on every answer, set when a request starts (apps/packager-api
 * request-log.ts); problems carry it through PROBLEM_HEADERS, a success answer here, so a host answers alike.
 */
const NOSNIFF = { 'x-content-type-options': 'nosniff' } as const;

function successOf(result: OperationResult, opHeaders: Readonly<Record<string, string>>): PackagerAnswer {
  return {
    status: result.status,
    headers: { ...opHeaders, 'content-type': result.type, ...NOSNIFF },
    body: bytesOf(result.body),
  };
}

/** The methods a path takes, as the Express service's `Allow` lists them (`HEAD` with every `GET`). */
function allowOf(spec: OperationSpec): string {
  return spec.method === 'GET' ? 'GET, HEAD' : spec.method;
}

function held(read: ReadRequest, spec: OperationSpec): HeldPackagerRequest {
  let ran: Promise<PackagerAnswer> | undefined;
  let wiped = false;
  return {
    operation: read.operation,
    run(requestId) {
      if (ran !== undefined) return ran;
      if (wiped) {
        // A host bug: running with zeroed keys would sign and encrypt with all-zero keys.
        ran = Promise.resolve(
          answerOf(new Error('the held request was wiped before it ran'), requestId, spec.headers),
        );
        return ran;
      }
      ran = Promise.resolve()
        .then(() => read.perform())
        .then(
          (result) => successOf(result, spec.headers),
          (err: unknown) => answerOf(err, requestId, spec.headers),
        );
      return ran;
    },
    wipe() {
      wiped = true;
      read.wipe();
    },
  };
}

/**
 * The packager for a host that serves its operations over its own HTTP server (the agent's packager app): `read`
 * a request for an operation, hold it, `run` it into an answer, `wipe` it; `answer` turns a refused read into the
 * answer the Express service gives. Nothing here listens, logs or reads the environment.
 * @throws TypeError / RangeError for a limit that is not a whole number of bytes.
 */
export function createPackagerCapability(options: PackagerCapabilityOptions = {}): PackagerCapability {
  const ops = createPackagerOperations(options);
  /** The operation headers of an error a read rejected with (what the Express service had set before it). */
  const readErrors = new WeakMap<object, Readonly<Record<string, string>>>();
  /** The check of each configuration text seen (a host has one per deployment). */
  const checks = new Map<string, TokenCheck | null>();
  const checkOf = (records: string): TokenCheck | null => {
    let check = checks.get(records);
    if (check === undefined) {
      const parsed = parseTokenHashes(records, 'callerTokenHashes');
      check = parsed.length === 0 ? null : createTokenCheck(parsed);
      checks.set(records, check);
    }
    return check;
  };
  const authorize = (
    operation: string,
    authorization: string | readonly string[] | undefined,
    dirs: PackagerDirs,
  ): void => {
    if (dirs.callerTokenHashes !== undefined)
      checkOf(dirs.callerTokenHashes)?.authorize(authorization, operation);
  };
  return {
    operations: PACKAGER_OPERATIONS,
    authorize,
    async read(operation, req, dirs, multipartByteLimit) {
      const spec = ops.spec(operation);
      // The Express service routes by method: another method on the path is 405 with `Allow`.
      const method = req.method ?? '';
      if (method !== spec.method && !(spec.method === 'GET' && method === 'HEAD')) {
        const allow = allowOf(spec);
        throw new RequestError('REQUEST_METHOD_NOT_ALLOWED', `this path takes ${allow}`, {
          headers: { Allow: allow },
        });
      }
      try {
        // The caller's token is checked before anything of the request is read (ADR 0140).
        authorize(operation, req.headers.authorization, dirs);
        return held(await ops.read(operation, req, dirs, multipartByteLimit), spec);
      } catch (err) {
        if (typeof err === 'object' && err !== null) readErrors.set(err, spec.headers);
        throw err;
      }
    },
    checkCallerTokens(records, source) {
      parseTokenHashes(records, source);
    },
    uploadOptions: (operation, multipartByteLimit) => ops.uploadOptions(operation, multipartByteLimit),
    answer(err, requestId) {
      const opHeaders = typeof err === 'object' && err !== null ? readErrors.get(err) : undefined;
      return answerOf(err, requestId, opHeaders ?? {});
    },
  };
}
