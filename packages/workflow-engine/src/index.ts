export { createWorkflowEngine, DEFAULT_LIMITS, MAX_FORGOTTEN_RUNS, MAX_LIMITS } from './engine.js';
export { HOST_SERVED_TYPES } from './host-served.js';
export { EngineError, ENGINE_ERROR_CODES, isEngineError } from './errors.js';
export type { EngineErrorCode } from './errors.js';
export { MIN_SECRET_CHARS, REDACTED, Redactor, SECRET_FORMS } from './redact.js';
export { MAX_SEND_DEPTH } from './send-ops.js';
export {
  DEFAULT_SANDBOX_IDLE_MS,
  MAX_POOLED_WORKERS,
  MAX_SANDBOX_IDLE_MS,
  MAX_SANDBOX_WORKERS,
  sandboxWorkersStarted,
  setSandboxIdleMs,
  setSandboxWorkers,
} from './sandbox-workers.js';
export { prewarmSandbox } from './sandbox.js';
export { MAX_FILE_ID_CHARS, MAX_FILE_PATH_CHARS } from './file-ops.js';
export type { FileEntry, FileHost } from './file-ops.js';
export { listSteps } from './list-steps.js';
export { MAX_SPLIT_ITEMS, SPLIT_CONCURRENCY } from './split-ops.js';
export type {
  DeploymentCall,
  EngineHost,
  EngineOptions,
  OutboundRequest,
  OutboundResponse,
  PackagerRequest,
  PackagerResponse,
  RunStepOptions,
  StepInfo,
  StepInput,
  StepRef,
  StepResult,
  WorkflowEngine,
} from './types.js';
export { RepeatLimiter, MAX_REPEAT_KEYS } from './repeat-limiter.js';
export type { RepeatLimiterOptions } from './repeat-limiter.js';
export { planSchedule, MAX_TIMER_MS } from './schedule-plan.js';
export type { ScheduledKind, ScheduledStep, SchedulePlanProblem } from './schedule-plan.js';
export {
  createScheduler,
  systemClock,
  DEFAULT_ERROR_REPEAT_INTERVAL_MS,
  MAX_TIMEOUT_MS,
} from './scheduler.js';
export type {
  ErrorReport,
  RunOutcome,
  RunReport,
  Scheduler,
  SchedulerClock,
  SchedulerOptions,
  SkipReport,
  StepCounters,
} from './scheduler.js';
export { describeUnsupported, UNSUPPORTED_CONTEXT_CALLS, UNSUPPORTED_STEP_TYPES } from './unsupported.js';
export type { UnsupportedCall, UnsupportedFeature } from './unsupported.js';
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
