import type { Reporter, TestModule } from 'vitest/node';

/** Prints one closing line, `vitest: N passed, N failed, N skipped`, which CI reads. */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>): void {
    let passed = 0;
    let failed = unhandledErrors.length;
    let skipped = 0;
    for (const mod of modules) {
      const tests = [...mod.children.allTests()];
      // A file that throws on import has no tests, but it is still a failure.
      if (tests.length === 0 && mod.state() === 'failed') failed += 1;
      for (const test of tests) {
        const state = test.result().state;
        if (state === 'passed') passed += 1;
        else if (state === 'failed') failed += 1;
        else skipped += 1;
      }
    }
    process.stdout.write(`\nvitest: ${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}
