import { existsSync } from 'node:fs';
import { prewarmSandbox } from '@org/workflow-engine/prewarm';
import type {
  REPORTERS,
  ReporterName,
  RunnerConfig,
  TEST_FILE_SUFFIX,
  TestResult,
} from '@org/workflow-test-runner';
import { Command, Option } from 'commander';
import type { Context } from '../context.js';
import { asUsage, CliError, EXIT_FAILURE, EXIT_OK, EXIT_USAGE } from '../errors.js';
import { STDIO, writeOutput } from '../io.js';
import { checkOutputs } from '../output-paths.js';

/** The config file `oapp test` reads when none is named. */
export const DEFAULT_CONFIG_FILE = 'testrunner.config.json';

/**
 * The runner's reporters and test file suffix, needed before the runner is loaded (it is loaded when the command
 * runs, ADR 0149); their types make the compiler check they equal the runner's.
 */
const REPORTER_NAMES: typeof REPORTERS = ['text', 'junit'];
const TEST_SUFFIX: typeof TEST_FILE_SUFFIX = '.test.json';

interface TestOptions {
  reporter: ReporterName;
  output: string;
  concurrency?: number;
  iterations?: number;
  stopOnFailure?: boolean;
  debug?: boolean;
  json?: boolean;
}

function positive(name: string, max: number) {
  return (raw: string): number => {
    if (!/^[0-9]{1,6}$/.test(raw) || Number(raw) < 1 || Number(raw) > max)
      throw new CliError('CLI_USAGE', `${name} must be an integer from 1 to ${max}`);
    return Number(raw);
  };
}

/** `[config] [tests…]`: the first argument is the config unless it names a test file. */
function splitArgs(args: readonly string[]): { config: string; tests: string[] } {
  const [first, ...rest] = args;
  if (first === undefined || first.endsWith(TEST_SUFFIX))
    return { config: DEFAULT_CONFIG_FILE, tests: [...args] };
  return { config: first, tests: rest };
}

function withOverrides(config: RunnerConfig, o: TestOptions): RunnerConfig {
  return {
    ...config,
    ...(o.concurrency === undefined ? {} : { concurrency: o.concurrency }),
    ...(o.iterations === undefined ? {} : { iterations: o.iterations }),
    ...(o.stopOnFailure === true ? { stopOnFailure: true } : {}),
    ...(o.debug === true ? { debug: true } : {}),
  };
}

function resultJson(r: TestResult) {
  return {
    name: r.name,
    iteration: r.iteration,
    status: r.status,
    durationMs: Math.round(r.durationMs),
    ...(r.skipReason === undefined ? {} : { skipReason: r.skipReason }),
    failures: r.failures,
    errors: r.errors,
  };
}

/** `oapp test`: runs `*.test.json` workflow tests in process on the agent's runtime, against a mock server. */
export function testCommand(ctx: Context, done: (code: number) => void): Command {
  return new Command('test')
    .description(
      'run workflow tests (*.test.json) in process on the agent runtime, with outbound calls answered by mocks',
    )
    .argument(
      '[config-and-tests...]',
      `testrunner.config.json (default ./${DEFAULT_CONFIG_FILE}), then test files to run (default: every test)`,
    )
    .addOption(
      new Option('--reporter <name>', 'text or junit (JUnit XML for CI)')
        .choices(REPORTER_NAMES)
        .default('text'),
    )
    .option('-o, --output <file>', 'where the report goes (the junit XML, or the text report)', STDIO)
    .option('--concurrency <n>', 'tests run at once (overrides the config)', positive('--concurrency', 64))
    .option(
      '--iterations <n>',
      'run every test this many times (overrides the config)',
      positive('--iterations', 1000),
    )
    .option('--stop-on-failure', 'start no test after the first failure')
    .option('--debug', "print the deployment's log lines of each failed test")
    .option('--json', 'print {ok, passed, failed, skipped, results} instead of the text report')
    .addHelpText(
      'after',
      '\nExit status: 0 every test passed or was skipped; 1 a test failed; 2 the config, a test file or the ' +
        'command line is wrong.\n' +
        'Examples:\n' +
        '  oapp test\n' +
        '  oapp test examples/timer-metrics/testrunner.config.json\n' +
        '  oapp test testrunner.config.json tests/login.test.json --reporter junit -o junit.xml',
    )
    .action(async (args: string[], o: TestOptions) => {
      // The report is written after every test ran: a bad -o must not cost the whole run.
      checkOutputs([{ path: o.output, flag: '-o' }]);
      const { config: configPath, tests } = splitArgs(args);
      if (!existsSync(configPath))
        throw new CliError(
          'CLI_FILE_UNREADABLE',
          `${configPath}: no such file (the test runner config)`,
          EXIT_USAGE,
        );
      // The first sandbox worker starts on its own thread while the runner loads and reads the tests, so the
      // first test does not wait for it (ADR 0149).
      prewarmSandbox();
      const {
        createInProcessDeployer,
        formatFailureDetails,
        formatJunitReport,
        formatLegacyNotices,
        formatResultLine,
        formatRunWarning,
        formatSummaryLine,
        loadRunnerConfig,
        renderMockCalls,
        runTests,
      } = await import('@org/workflow-test-runner');
      const config = withOverrides(await asUsage(configPath, () => loadRunnerConfig(configPath)), o);
      const streaming = o.reporter === 'text' && o.json !== true && o.output === STDIO;
      const summary = await asUsage('', () =>
        runTests(config, {
          // A test whose bootstrap grants allowPackagerAccess gets the packager, as the agent has it (ADR 0136);
          // loaded only for such a test.
          deploy: createInProcessDeployer({
            packager: async () => (await import('@org/packager')).createPackagerCapability(),
          }),
          // `${NAME}` in test bootstraps reads the environment, as the agent does (issue 28).
          environment: ctx.env,
          ...(tests.length === 0 ? {} : { tests }),
          // Before the first test: one line per unmocked host (issue 28).
          onWarning: (w) => ctx.warn(formatRunWarning(w)),
          onResult: (r) => {
            if (!streaming) return;
            ctx.print(formatResultLine(r, config.iterations));
            if (r.status !== 'failed') return;
            ctx.print(formatFailureDetails(r));
            if (config.debug && r.logs.length > 0)
              ctx.print(['  deployment log:', ...r.logs.map((l) => `    ${l}`)].join('\n'));
          },
        }),
      );
      const status = summary.failed > 0 ? EXIT_FAILURE : EXIT_OK;
      if (o.json === true) {
        ctx.printJson({
          ok: summary.failed === 0,
          passed: summary.passed,
          failed: summary.failed,
          skipped: summary.skipped,
          legacy: formatLegacyNotices(summary.legacy),
          warnings: summary.warnings.map(formatRunWarning),
          results: summary.results.map(resultJson),
          mockCalls: Object.fromEntries(
            summary.results
              .filter((r) => r.status === 'failed')
              .map((r) => [r.name, renderMockCalls(r.mockCalls)]),
          ),
        });
        return done(status);
      }
      if (o.reporter === 'junit') {
        await writeOutput(o.output, formatJunitReport(summary, config.iterations));
        ctx.error(formatSummaryLine(summary));
        return done(status);
      }
      const tail = [...formatLegacyNotices(summary.legacy), formatSummaryLine(summary)];
      if (streaming) ctx.print(tail.join('\n'));
      else {
        const lines: string[] = [];
        for (const r of summary.results) {
          lines.push(formatResultLine(r, config.iterations));
          if (r.status === 'failed') lines.push(formatFailureDetails(r));
        }
        await writeOutput(o.output, `${[...lines, ...tail].join('\n')}\n`);
        ctx.error(formatSummaryLine(summary));
      }
      done(status);
    });
}
