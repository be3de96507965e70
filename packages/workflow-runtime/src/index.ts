export {
  AGENT_ERROR_CODES,
  AgentError,
  isAgentError,
  isCodedError,
  withContext,
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
export { closePersistence, planPersistence, type PersistencePlan } from './persistence.js';
export {
  createStringDecryptor,
  registerRecordSecrets,
  readRestrictedData,
  type StringDecryptor,
} from './secrets.js';
export {
  createEngineHost,
  type EngineHostDeps,
  type OutboundTransport,
  type TransportRequest,
} from './engine-host.js';
export {
  closeAll,
  listenAll,
  type Listening,
  type ServerSet,
  type ServerSpec,
  type TriggerListener,
} from './listen.js';
export {
  DEPLOYMENT_ACCESS_PROPERTIES,
  type DeploymentCalls,
  type InProcTarget,
} from './deployments/registry.js';
export type { InProcRequest } from './deployments/in-proc.js';
export { DEFAULT_TCP_LIMITS, type TcpLimits } from './tcp/limits.js';
export { TCP_PROPERTIES } from './tcp/connection.js';
export { RunTracker } from './http/run-tracker.js';
export {
  DELIBERATE_DIFFERENCES,
  SUPPORTED_TRIGGERS,
  IGNORED_RECORD_FIELDS,
  unsupportedUses,
  type UnsupportedUse,
} from './start-up-report.js';
export { createRuntime, type Runtime, type RuntimeOptions, type StepRunCounters } from './runtime.js';
export { DEFAULT_ASSET_LIMITS, type AssetLimits } from './assets/zip-checks.js';
export { DEFAULT_FILE_LIMITS, type FileLimits } from './files/limits.js';
