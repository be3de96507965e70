// `@org/workflow-test-runner/internal`: the runner's steps one by one, for this repository's tests and benchmarks.
// Not covered by semantic versioning: any release may change or remove them. The documented API is ./index.ts.
export { LEGACY_MESSAGES, mergeLegacyNotices } from './legacy.js';
export { discoverTests, findMisnamedTests, MAX_TEST_DEPTH, TEST_SNIFF_BYTES } from './discover.js';
export type { DiscoveredTest } from './discover.js';
export { MAX_PATH_LENGTH } from './paths.js';
export { buildTestWorkflow } from './prepare-workflow.js';
export type { BuildTestWorkflowInput } from './prepare-workflow.js';
export { loadTest, prepareTest, MAX_MOCK_FILE_BYTES } from './prepare.js';
export type { LoadedTest, PrepareTestOptions } from './prepare.js';
export { MOCK_HOSTNAME } from './mock-url.js';
export { MAX_DIFF_CHARS } from './assertions.js';
export { DEFAULT_GRACE_MS } from './run.js';
export { escapeXml } from './report.js';
