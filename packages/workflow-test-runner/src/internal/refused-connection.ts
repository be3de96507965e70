import { isTestRunnerError } from '../errors.js';

/**
 * What a deployer hands the runtime when the mock transport refused a call because its host is not the mock
 * (`TESTRUNNER_HOST_NOT_MOCKED`, S156): a refused connection, as the reference answers a host nobody listens on
 * (issue 28). Nothing was sent, and nothing will be.
 *
 * The error has no `code` on purpose: by the runtime's transport contract (workflow-runtime README, "The transport
 * hook") an uncoded error is a failed connection, `POLICY_CONNECT_FAILED`, the code its own transport gives an
 * `ECONNREFUSED`; the engine then runs the step's `httpConnectFailedProcessor` (or records the run error when the
 * step has none). It never leaves the runtime uncoded. Any other error is thrown as it is.
 *
 * @param err - what the mock transport rejected with.
 */
export function rethrowAsRefusedConnection(err: unknown): never {
  if (!isTestRunnerError(err) || err.code !== 'TESTRUNNER_HOST_NOT_MOCKED') throw err;
  throw new Error(`connection refused: ${err.message}`, { cause: err });
}
