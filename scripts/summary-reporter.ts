import type { Reporter, TestCase, TestModule } from 'vitest/node';

/** A test slower than this (a second, on a quiet machine) should be made faster or carry an explicit timeout. */
const SLOW_MS = 1000;
/** Vitest's own default `testTimeout`: a project with another value chose its own. */
const VITEST_DEFAULT_TIMEOUT_MS = 5000;

/** How many of the slowest test files are listed, with their time: where CI's minutes go (the 15-minute budget). */
const SLOWEST_FILES = 15;

/**
 * Prints the slowest test files, then the tests that took over {@link SLOW_MS} with no timeout of their own (their timeout is their project's
 * `testTimeout`), so they are seen and either made faster or given an explicit, justified timeout (issue 27); then
 * one closing line, `vitest: N passed, N failed, N skipped`, which CI reads (always the last line).
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>): void {
    let passed = 0;
    let failed = unhandledErrors.length;
    let skipped = 0;
    const slow: string[] = [];
    for (const mod of modules) {
      const tests = [...mod.children.allTests()];
      // A file that throws on import has no tests, but it is still a failure.
      if (tests.length === 0 && mod.state() === 'failed') failed += 1;
      for (const test of tests) {
        const state = test.result().state;
        if (state === 'passed') passed += 1;
        else if (state === 'failed') failed += 1;
        else skipped += 1;
        const line = slowLine(mod, test);
        if (line !== undefined) slow.push(line);
      }
    }
    const files = modules
      .map((mod) => ({ ms: mod.diagnostic().duration, name: `${mod.project.name}/${mod.relativeModuleId}` }))
      .sort((a, b) => b.ms - a.ms)
      .slice(0, SLOWEST_FILES);
    if (files.length > 0)
      process.stdout.write(
        `\nslowest test files (each file's own time; files run in parallel):\n` +
          files.map((f) => `  ${(f.ms / 1000).toFixed(1).padStart(6)} s  ${f.name}`).join('\n') +
          '\n',
      );
    if (slow.length > 0)
      process.stdout.write(
        `\ntests over ${SLOW_MS} ms without a timeout of their own (${slow.length}; on a busy machine some are only slow here):\n${slow.join('\n')}\n`,
      );
    process.stdout.write(`\nvitest: ${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}

function slowLine(mod: TestModule, test: TestCase): string | undefined {
  const ms = test.diagnostic()?.duration ?? 0;
  if (ms <= SLOW_MS) return undefined;
  const project = mod.project.config;
  // A project that sets its own testTimeout (with its reason in its config, e.g. the cli's child processes) counts.
  if (project.testTimeout !== VITEST_DEFAULT_TIMEOUT_MS) return undefined;
  if (test.options.timeout !== undefined && test.options.timeout !== project.testTimeout) return undefined;
  return `  ${Math.round(ms)} ms  ${mod.project.name}/${mod.relativeModuleId} > ${test.fullName}`;
}
