import { TestRunnerError } from './errors.js';
import { quoteName } from './internal/text.js';

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * Maps a `makeTheseCalls[].url` (written against the port in the bootstrap, e.g. `http://localhost:11000/x`) to
 * the loopback port the deployer actually bound for that server, so tests can run side by side. Only loopback
 * URLs are routed: a test never sends its calls anywhere else.
 *
 * @param url - the call's URL.
 * @param ports - configured port → bound port.
 * @throws TestRunnerError `TESTRUNNER_TEST_INVALID` for a non-loopback URL or a port no server of the test has.
 */
export function routeCallUrl(url: string, ports: ReadonlyMap<number, number>): string {
  const u = new URL(url);
  if (u.protocol !== 'http:' || !LOOPBACK_NAMES.has(u.hostname)) {
    throw new TestRunnerError(
      'TESTRUNNER_TEST_INVALID',
      `call to ${quoteName(u.origin)}: makeTheseCalls only reaches the test's own servers on http://localhost`,
    );
  }
  const configured = Number(u.port === '' ? '80' : u.port);
  const bound = ports.get(configured);
  if (bound === undefined) {
    throw new TestRunnerError(
      'TESTRUNNER_TEST_INVALID',
      `call to port ${configured}: no server of this test listens there`,
    );
  }
  u.hostname = '127.0.0.1';
  u.port = String(bound);
  return u.href;
}
