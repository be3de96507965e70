// `@org/workflow-runtime/internal`: the runtime's parts, for the agent's wiring, this repository's tests and
// benchmarks. Not covered by semantic versioning: any release may change or remove them. The documented API is
// ./index.ts.
export { withContext } from './errors.js';
export { closePersistence, planPersistence, type PersistencePlan } from './persistence.js';
export { createEngineHost, type EngineHostDeps } from './engine-host.js';
export {
  DEPLOYMENT_ACCESS_PROPERTIES,
  type DeploymentCalls,
  type InProcTarget,
} from './deployments/registry.js';
export type { InProcRequest } from './deployments/in-proc.js';
export { TCP_PROPERTIES } from './tcp/connection.js';
export { RunTracker } from './http/run-tracker.js';
export {
  DELIBERATE_DIFFERENCES,
  SUPPORTED_TRIGGERS,
  IGNORED_RECORD_FIELDS,
  unsupportedUses,
  type UnsupportedUse,
} from './start-up-report.js';
export { connectionsCheckingIntervalOf, MAX_CONNECTIONS_CHECK_MS } from './listen-timeouts.js';
