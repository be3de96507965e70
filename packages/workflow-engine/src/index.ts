export { createWorkflowEngine, DEFAULT_LIMITS, MAX_FORGOTTEN_RUNS } from './engine.js';
export { EngineError, ENGINE_ERROR_CODES } from './errors.js';
export type { EngineErrorCode } from './errors.js';
export { MIN_SECRET_CHARS, REDACTED, Redactor, SECRET_FORMS } from './redact.js';
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
