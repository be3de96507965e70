import { afterEach, describe, expect, it } from 'vitest';
import { createInProcessDeployer, runTests, TestRunnerError, type TestResult } from '../src/index.js';
import { scriptTimeOf } from '../src/internal/script-time.js';
import { config, project } from './fixtures.js';

// oapp test and the script time limit (issue 28): the test bootstrap's scriptTimeoutMs wins over the variable
// AGENT_SCRIPT_TIME_MS, which wins over the agent's default.

let cleanups: (() => void)[] = [];
afterEach(() => {
  cleanups.forEach((c) => c());
  cleanups = [];
});

/** One step that computes for 300 ms of wall time, then sends a metric (as the reference's security test does). */
const busy = {
  workflows: [
    {
      name: 'busy',
      steps: [
        {
          stepId: 'spin',
          resultsProcessor: {
            script:
              "const t = Date.now(); while (Date.now() - t < 300) {} context.sendMetric('finished', 1);",
          },
        },
      ],
    },
  ],
};

const test = (extra: Record<string, unknown>) => ({
  fromDirectory: '',
  testThisStep: 'spin',
  useThisTestConfigFile: 'busy.json',
  theseMetricsShouldHaveBeenSent: [{ key: 'finished', value: 1 }],
  ...extra,
});

describe('oapp test: scriptTimeoutMs and AGENT_SCRIPT_TIME_MS (issue 28)', () => {
  it("takes AGENT_SCRIPT_TIME_MS from the variables; the test bootstrap's scriptTimeoutMs wins", async () => {
    const p = project({
      'resources/.keep': '',
      'tests/busy.json': busy,
      'tests/long.json': { scriptTimeoutMs: 1000 },
      // The variable alone (100 ms) stops the 300 ms computation …
      'tests/variable.test.json': test({}),
      // … the bootstrap's 1 000 ms lets it finish …
      'tests/bootstrap.test.json': test({ useThisTestBootstrapFile: 'long.json' }),
      // … and a variable that is not a limit fails the test, naming it.
      'tests/bad.test.json': test({ variables: { AGENT_SCRIPT_TIME_MS: '5s' } }),
    });
    cleanups.push(p.cleanup);
    const summary = await runTests(config(p.root, { variables: { AGENT_SCRIPT_TIME_MS: '100' } }), {
      deploy: createInProcessDeployer(),
    });
    const by = (name: string) =>
      summary.results.find((r) => r.name === `tests/${name}.test.json`) as TestResult;
    expect(by('bootstrap').failures).toEqual([]);
    expect(by('variable').status).toBe('failed');
    expect(JSON.stringify(by('variable'))).toContain('ENGINE_TIMEOUT');
    expect(by('bad').status).toBe('failed');
    expect(JSON.stringify(by('bad'))).toContain(
      'variable AGENT_SCRIPT_TIME_MS: not an integer from 1 to 600000',
    );
    // About 2.5 s: three deployments on real sandbox engines and ~0.4 s of deliberate computing.
  }, 10_000);

  it('reads the variable as the agent reads its environment: unset or empty is the default', () => {
    expect(scriptTimeOf({}, 5000)).toBe(5000);
    expect(scriptTimeOf({ AGENT_SCRIPT_TIME_MS: '' }, 5000)).toBe(5000);
    expect(scriptTimeOf({ AGENT_SCRIPT_TIME_MS: '600000' }, 5000)).toBe(600_000);
    for (const bad of ['0', '600001', '-1', '1.5', ' 7'])
      expect(() => scriptTimeOf({ AGENT_SCRIPT_TIME_MS: bad }, 5000)).toThrowCode(
        TestRunnerError,
        'TESTRUNNER_DEPLOY_FAILED',
      );
  });
});
