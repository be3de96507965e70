import { expect, it } from 'vitest';
import * as runner from '../src/index.js';

it('keeps the public surface of the test runner stable', () => {
  expect(Object.keys(runner).sort()).toMatchInlineSnapshot(`
    [
      "BUILT_IN_VARIABLES",
      "DEFAULT_CALL_TIMEOUT_SECONDS",
      "DEFAULT_WAIT_SECONDS",
      "MAX_TEST_FILES",
      "MAX_WAIT_SECONDS",
      "REPORTERS",
      "RUNNER_CONFIG_SCHEMA",
      "TESTRUNNER_ERROR_CODES",
      "TEST_FILE_SCHEMA",
      "TEST_FILE_SUFFIX",
      "TestRunnerError",
      "UNMATCHED_STATUS",
      "createInProcessDeployer",
      "createMockServer",
      "evaluateRun",
      "formatFailureDetails",
      "formatJunitReport",
      "formatLegacyNotices",
      "formatResultLine",
      "formatRunWarning",
      "formatSummaryLine",
      "formatTextReport",
      "isTestRunnerError",
      "loadRunnerConfig",
      "mergeTestBootstrap",
      "parseRunnerConfig",
      "parseTestFile",
      "renderMockCalls",
      "routeCallUrl",
      "runTests",
      "testDeploymentId",
    ]
  `);
  expect(runner.TESTRUNNER_ERROR_CODES).toMatchInlineSnapshot(`
    [
      "TESTRUNNER_JSON_INVALID",
      "TESTRUNNER_CONFIG_INVALID",
      "TESTRUNNER_TEST_INVALID",
      "TESTRUNNER_PATH_INVALID",
      "TESTRUNNER_PATH_OUTSIDE_ROOT",
      "TESTRUNNER_FILE_NOT_FOUND",
      "TESTRUNNER_FILE_TOO_LARGE",
      "TESTRUNNER_TOO_MANY_TESTS",
      "TESTRUNNER_WORKFLOW_INVALID",
      "TESTRUNNER_BOOTSTRAP_INVALID",
      "TESTRUNNER_HOST_NOT_MOCKED",
      "TESTRUNNER_DEPLOY_FAILED",
      "TESTRUNNER_TIMEOUT",
    ]
  `);
});

// @org/workflow-test-runner/internal: unstable, for this repository's tests (README).
it('keeps the runner steps in ./internal, apart from the main entry', async () => {
  const internal = Object.keys(await import('../src/internal.js')).sort();
  expect(internal.filter((k) => Object.keys(runner).includes(k))).toEqual([]);
  expect(internal).toMatchInlineSnapshot(`
    [
      "DEFAULT_GRACE_MS",
      "LEGACY_MESSAGES",
      "MAX_DIFF_CHARS",
      "MAX_MOCK_FILE_BYTES",
      "MAX_PATH_LENGTH",
      "MAX_TEST_DEPTH",
      "MOCK_HOSTNAME",
      "TEST_SNIFF_BYTES",
      "buildTestWorkflow",
      "discoverTests",
      "escapeXml",
      "findMisnamedTests",
      "loadTest",
      "mergeLegacyNotices",
      "prepareTest",
    ]
  `);
});
