export { TestRunnerError, TESTRUNNER_ERROR_CODES, isTestRunnerError } from './errors.js';
export type { TestRunnerErrorCode, TestRunnerErrorDetail } from './errors.js';
export { RUNNER_CONFIG_SCHEMA, TEST_FILE_SCHEMA, MAX_WAIT_SECONDS } from './schemas.js';
export { parseRunnerConfig, loadRunnerConfig } from './config-file.js';
export type { RunnerConfig, ParseRunnerConfigOptions } from './config-file.js';
export { parseTestFile, DEFAULT_WAIT_SECONDS, DEFAULT_CALL_TIMEOUT_SECONDS } from './test-file.js';
export type { TestSpec, MockEndpointSpec, ExpectedMetric, CallSpec } from './test-file.js';
export { LEGACY_MESSAGES, mergeLegacyNotices } from './legacy.js';
export type { LegacyNotice } from './legacy.js';
export { discoverTests, TEST_FILE_SUFFIX, MAX_TEST_FILES, MAX_TEST_DEPTH } from './discover.js';
export type { DiscoveredTest } from './discover.js';
export { MAX_PATH_LENGTH } from './paths.js';
export { buildTestWorkflow } from './prepare-workflow.js';
export type { BuildTestWorkflowInput } from './prepare-workflow.js';
export { mergeTestBootstrap, BUILT_IN_VARIABLES } from './prepare-bootstrap.js';
export type { MergeTestBootstrapInput } from './prepare-bootstrap.js';
export { loadTest, prepareTest, testDeploymentId, MAX_MOCK_FILE_BYTES } from './prepare.js';
export type { LoadedTest, PreparedTest } from './prepare.js';
export { MOCK_HOSTNAME } from './mock-url.js';
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
export { evaluateRun, renderMockCalls, MAX_DIFF_CHARS } from './assertions.js';
export type {
  CallOutcome,
  Expectations,
  Failure,
  FailureKind,
  Observation,
  ObservedMetric,
} from './assertions.js';
export { runTests, DEFAULT_GRACE_MS } from './run.js';
export type { Deployer, DeployInput, RunSummary, RunTestsOptions, TestResult, TestStatus } from './run.js';
export {
  REPORTERS,
  escapeXml,
  formatFailureDetails,
  formatJunitReport,
  formatLegacyNotices,
  formatResultLine,
  formatSummaryLine,
  formatTextReport,
} from './report.js';
export type { ReporterName } from './report.js';
export { routeCallUrl } from './routing.js';
export { createInProcessDeployer } from './deploy.js';
export type { InProcessDeployerOptions } from './deploy.js';
