import type { ReadUploadOptions } from '@org/multipart-limits';
import type { PackagerOperations, TokenCheck } from '@org/packager';
import type { Limits } from './config.js';
import type { Logger } from './logger.js';

/** What the routes need: limits, the resource directories and a logger. */
export interface AppDeps {
  limits: Limits;
  /** Resource directories, searched in order (also where /build-workflows finds `sourceWorkflow` files). */
  resourceDirs: readonly string[];
  log: Logger;
  /** Upload options by route path (derived from `limits`; what the checkContinue listener judges headers with). */
  uploads: ReadonlyMap<string, ReadUploadOptions>;
  /** The @org/packager operations the routes run (default: made from `limits`). */
  operations?: PackagerOperations | undefined;
  /** The caller check (ADR 0140); undefined: no tokens configured, every operation is open. */
  tokens?: TokenCheck | undefined;
}
