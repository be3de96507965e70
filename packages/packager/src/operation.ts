import type { Keyring } from './keyring.js';
import type { Limits } from './limits.js';

/** Every operation, named as its path in the HTTP API without the slash. */
export const PACKAGER_OPERATIONS = Object.freeze([
  'workflow-package',
  'bootstrap-encrypt',
  'string-encrypt',
  'workflow-compile',
  'workflow-hash',
  'workflow-inspect',
  'package-envelope',
  'build-workflows',
  'key-gen',
  'health',
] as const);

/** One of {@link PACKAGER_OPERATIONS}. */
export type PackagerOperation = (typeof PACKAGER_OPERATIONS)[number];

/** True for the name of an operation. */
export function isPackagerOperation(name: unknown): name is PackagerOperation {
  return typeof name === 'string' && (PACKAGER_OPERATIONS as readonly string[]).includes(name);
}

/** What an operation answers when it succeeds. */
export interface OperationResult {
  /** 200 for every operation today. */
  status: number;
  /** The `Content-Type` of the answer (`application/json; charset=utf-8`, `application/octet-stream`, …). */
  type: string;
  /** The answer: text (JSON, Base64, `-2/`) or bytes (a package). */
  body: string | Uint8Array;
}

/** Where the operations find files. */
export interface PackagerDirs {
  /** Resource directories, searched in order (`resource` references; also /build-workflows' source workflows). */
  resourceDirs: readonly string[];
  /** More directories /build-workflows reads source workflows from, after the resource directories. */
  workflowSourceDirs: readonly string[];
  /**
   * Caller token records (ADR 0140; `parseTokenHashes` text). When set, the capability's `read` asks every
   * operation but `health` for a bearer token with the operation's scope before reading anything else.
   */
  callerTokenHashes?: string | undefined;
}

/** What an operation runs with besides its request: the limits and the directories. */
export interface OperationEnv extends PackagerDirs {
  limits: Limits;
}

/** A `body` + `stream` request with keys, once its `body` part is valid and its keys are parsed. */
export interface KeyedForm<T> {
  /** The negotiated answer type. */
  type: string;
  /** The validated `body` part. */
  request: T;
  /** Every key of `request.keys`, parsed (wiped by the caller when the request is done). */
  ring: Keyring;
  /** The `stream` part's bytes, read on the first call (zeroed by the caller when the request is done). */
  content: () => Promise<Uint8Array>;
}
