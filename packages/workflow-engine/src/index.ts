export { createWorkflowEngine, DEFAULT_LIMITS, MAX_FORGOTTEN_RUNS } from './engine.js';
export { EngineError, ENGINE_ERROR_CODES } from './errors.js';
export type { EngineErrorCode } from './errors.js';
export { REDACTED } from './redact.js';
export { MAX_SEND_DEPTH } from './send-ops.js';
export type {
  EngineHost,
  EngineOptions,
  OutboundRequest,
  OutboundResponse,
  StepInfo,
  StepInput,
  StepResult,
  WorkflowEngine,
} from './types.js';
export {
  checkPersistenceSpec,
  createLmdbPersistence,
  DEFAULT_PERSISTENCE_LIMITS,
  storePathOf,
} from './persistence/lmdb-provider.js';
export type { LmdbPersistenceOptions } from './persistence/lmdb-provider.js';
export { persistenceSpecs } from './persistence/specs.js';
export type {
  PersistenceLimits,
  PersistenceProvider,
  PersistenceSpec,
  PersistentStore,
} from './persistence/types.js';
