/**
 * The packager capability as the runtime sees it (ADR 0136): a structural interface that `@org/packager`'s
 * `createPackagerCapability()` matches. The runtime never imports the packager; the agent passes one in
 * `RuntimeOptions.packager`, tests may pass any implementation.
 */
import type { IncomingMessage } from 'node:http';
import type { ReadUploadOptions } from '@org/multipart-limits';

/** Where the packager reads files: resource directories in search order, then source workflow directories. */
export interface PackagerDirs {
  resourceDirs: readonly string[];
  workflowSourceDirs: readonly string[];
  /**
   * The granting record's `data.callerTokenHashes`, one record a line (ADR 0140): when set, `read` refuses a request
   * without a bearer token of the operation's scope (401/403) before reading anything else of it.
   */
  callerTokenHashes?: string | undefined;
}

/** One answer of the packager, as bytes: what the Express service would send for the same request. */
export interface PackagerAnswer {
  status: number;
  /** Lower-case names; always includes content-type. Problems: application/problem+json, plus Allow/Accept-Post where the Express service sends them. */
  headers: Record<string, string>;
  body: Uint8Array;
  /** Set only for an uncoded (internal) error answered with the generic 500 problem: for the host's log, never sent. */
  failure?: unknown;
}

/** A request the capability read and holds until it runs; holds secrets (the multipart `body` part) until wiped. */
export interface HeldPackagerRequest {
  readonly operation: string;
  /** Runs the operation once. Never rejects: a coded error becomes its problem answer, anything else the generic 500 problem (failure set). */
  run(requestId: string): Promise<PackagerAnswer>;
  /** Zeroes every buffer of the request (body part bytes, stream part, parsed keys). Idempotent. */
  wipe(): void;
}

/** The packager's operations over node requests (`@org/packager`). */
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
   * The upload options an `Expect: 100-continue` request for `operation` is checked against from its headers alone
   * (S8), as the Express service checks them; undefined for an operation that takes no upload. Optional: without
   * it, `100 Continue` is sent and the read refuses the upload instead.
   */
  uploadOptions?(operation: string, multipartByteLimit?: number): ReadUploadOptions | undefined;
  /**
   * Checks caller token records as `read` uses them from `dirs.callerTokenHashes` (ADR 0140); throws a coded error
   * whose message names `source` and the line, never its text. Optional: a runtime refuses `callerTokenHashes` for
   * a capability without it.
   */
  checkCallerTokens?(records: string, source: string): void;
  /**
   * Checks the caller's token for `operation` from the request's `Authorization` header alone, as `read` checks it
   * first (ADR 0140); returns when `dirs.callerTokenHashes` needs none. Throws what `read` would reject with.
   * Optional: without it, a route with `callerTokenHashes` never sends `100 Continue` (its read judges the token).
   */
  authorize?(
    operation: string,
    authorization: string | readonly string[] | undefined,
    dirs: PackagerDirs,
  ): void;
}
