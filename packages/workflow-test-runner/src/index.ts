// The documented API (README "API"). Everything else is in ./internal.ts (`@org/workflow-test-runner/internal`,
// unstable).
export { TestRunnerError, TESTRUNNER_ERROR_CODES, isTestRunnerError } from './errors.js';
export type { TestRunnerErrorCode, TestRunnerErrorDetail, TestRunnerErrorDetails } from './errors.js';
export { RUNNER_CONFIG_SCHEMA, TEST_FILE_SCHEMA, MAX_WAIT_SECONDS } from './schemas.js';
export { parseRunnerConfig, loadRunnerConfig } from './config-file.js';
export type { RunnerConfig, ParseRunnerConfigOptions } from './config-file.js';
export { parseTestFile, DEFAULT_WAIT_SECONDS, DEFAULT_CALL_TIMEOUT_SECONDS } from './test-file.js';
export type { TestSpec, MockEndpointSpec, ExpectedMetric, CallSpec } from './test-file.js';
export type { LegacyNotice } from './legacy.js';
export { TEST_FILE_SUFFIX, MAX_TEST_FILES } from './discover.js';
export { mergeTestBootstrap, BUILT_IN_VARIABLES } from './prepare-bootstrap.js';
export type { MergeTestBootstrapInput } from './prepare-bootstrap.js';
export { testDeploymentId } from './prepare.js';
export type { PreparedTest } from './prepare.js';
export { createMockServer, UNMATCHED_STATUS } from './mock-server.js';
export type {
  CreateMockServerOptions,
  MockCall,
  MockCallOutcome,
  MockEndpoint,
  MockRequest,
  MockResponse,
  MockServer,
  MockTransport,
} from './mock-server.js';
export { evaluateRun, renderMockCalls } from './assertions.js';
export type {
  CallOutcome,
  Expectations,
  Failure,
  FailureKind,
  Observation,
  ObservedMetric,
} from './assertions.js';
export { runTests } from './run.js';
export type { Deployer, DeployInput, RunSummary, RunTestsOptions, TestResult, TestStatus } from './run.js';
export type { MisnamedTestWarning, RunWarning, UnmockedHostWarning } from './warnings.js';
export {
  REPORTERS,
  formatFailureDetails,
  formatJunitReport,
  formatLegacyNotices,
  formatResultLine,
  formatSummaryLine,
  formatRunWarning,
  formatTextReport,
} from './report.js';
export type { ReporterName } from './report.js';
export { routeCallUrl } from './routing.js';
export { createInProcessDeployer } from './deploy.js';
export type { InProcessDeployerOptions } from './deploy.js';
