// The documented API (README "API"). Everything else is in ./internal.ts (`@org/workflow-runtime/internal`,
// unstable).
export {
  AGENT_ERROR_CODES,
  AgentError,
  isAgentError,
  isCodedError,
  type AgentErrorCode,
  type CodedError,
} from './errors.js';
export { DEFAULT_LIMITS, DEFAULT_TIMEOUTS, type Limits, type Timeouts } from './limits.js';
export {
  LOG_LEVELS,
  createOutput,
  type Fields,
  type Level,
  type LineSink,
  type LogLevel,
  type Output,
  type WorkflowLogEntry,
  type WorkflowMetric,
} from './output.js';
export { hostPolicyOf, type VerifiedDeployment } from './deployment.js';
export {
  createStringDecryptor,
  registerRecordSecrets,
  readRestrictedData,
  type StringDecryptor,
} from './secrets.js';
export type { OutboundTransport, TransportRequest } from './engine-host.js';
export {
  closeAll,
  closeGracefully,
  isDraining,
  listenAll,
  trackConnections,
  type ClosableServer,
  type Listening,
  type ServerSet,
  type ServerSpec,
  type TriggerListener,
} from './listen.js';
export { applyServerTimeouts, type ServerTimeouts } from './listen-timeouts.js';
export { DEFAULT_TCP_LIMITS, type TcpLimits } from './tcp/limits.js';
export { createRuntime, type Runtime, type RuntimeOptions, type StepRunCounters } from './runtime.js';
export { DEFAULT_ASSET_LIMITS, type AssetLimits } from './assets/zip-checks.js';
export { DEFAULT_FILE_LIMITS, type FileLimits } from './files/limits.js';
export {
  KNOWN_METHODS,
  NO_METRICS,
  type OutboundCallEvent,
  type OutboundOutcome,
  type RuntimeMetrics,
  type StepRunEvent,
  type TriggerKind,
  type TriggerRequestEvent,
} from './observe/metrics.js';
export { MAX_REQUEST_ID_CHARS, REQUEST_ID_PATTERN, requestIdOf } from './observe/request-id.js';
export { packagerGranted } from './deployments/grants.js';
export type {
  HeldPackagerRequest,
  PackagerAnswer,
  PackagerCapability,
  PackagerDirs,
} from './packager/capability.js';
