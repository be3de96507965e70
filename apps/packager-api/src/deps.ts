import type { ReadUploadOptions } from '@org/multipart-limits';
import type { Limits } from './config.js';
import type { Logger } from './logger.js';

/** What the routes need: limits, the resource directories and a logger. */
export interface AppDeps {
  limits: Limits;
  /** Resource directories, searched in order (also where /build-workflows finds `sourceWorkflow` files). */
  resourceDirs: readonly string[];
  log: Logger;
  /** Upload options by route path (derived from `limits`). */
  uploads: ReadonlyMap<string, ReadUploadOptions>;
}
