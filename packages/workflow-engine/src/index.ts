export { createWorkflowEngine, DEFAULT_LIMITS, MAX_FORGOTTEN_RUNS, MAX_LIMITS } from './engine.js';
export { EngineError, ENGINE_ERROR_CODES } from './errors.js';
export type { EngineErrorCode } from './errors.js';
export { REDACTED } from './redact.js';
export { MAX_SEND_DEPTH } from './send-ops.js';
export { MAX_SPLIT_ITEMS, SPLIT_CONCURRENCY } from './split-ops.js';
export type {
  EngineHost,
  EngineOptions,
  OutboundRequest,
  OutboundResponse,
  StepInfo,
  StepInput,
  StepRef,
  StepResult,
  WorkflowEngine,
} from './types.js';
