import { MAX_SCRIPT_TIMEOUT_MS } from '@org/workflow-compiler';
import { TestRunnerError } from '../errors.js';

/** The test variable that sets the script time limit, as the agent's environment variable does (S52). */
export const SCRIPT_TIME_VARIABLE = 'AGENT_SCRIPT_TIME_MS';

/**
 * The default time limit of one processor run in a test: the test's (or the config's) variable
 * {@link SCRIPT_TIME_VARIABLE}, an integer from 1 to `MAX_SCRIPT_TIMEOUT_MS` as the agent reads it, else `fallback`.
 * A test bootstrap's `scriptTimeoutMs` still wins (the runtime applies it, compiler SPEC.md §8.4).
 *
 * @throws TestRunnerError `TESTRUNNER_DEPLOY_FAILED` naming the variable and the accepted range.
 */
export function scriptTimeOf(variables: Readonly<Record<string, string>>, fallback: number): number {
  const text = Object.prototype.hasOwnProperty.call(variables, SCRIPT_TIME_VARIABLE)
    ? variables[SCRIPT_TIME_VARIABLE]
    : undefined;
  // As the agent reads its environment: unset or empty is the default.
  if (text === undefined || text === '') return fallback;
  const ms = /^[0-9]{1,15}$/.test(text) ? Number(text) : Number.NaN;
  if (!(ms >= 1 && ms <= MAX_SCRIPT_TIMEOUT_MS))
    throw new TestRunnerError(
      'TESTRUNNER_DEPLOY_FAILED',
      `variable ${SCRIPT_TIME_VARIABLE}: not an integer from 1 to ${MAX_SCRIPT_TIMEOUT_MS}`,
    );
  return ms;
}
