import { describe, expect, it } from 'vitest';
import { isTestRunnerError, TestRunnerError } from '../src/index.js';

describe('isTestRunnerError', () => {
  it('recognises the class by name and a known code, also across copies of the package', () => {
    expect(isTestRunnerError(new TestRunnerError('TESTRUNNER_TIMEOUT', 'x'))).toBe(true);
    expect(isTestRunnerError({ name: 'TestRunnerError', code: 'TESTRUNNER_TIMEOUT' })).toBe(true);
    expect(isTestRunnerError({ name: 'TestRunnerError', code: 'OTHER' })).toBe(false);
    expect(isTestRunnerError(new Error('x'))).toBe(false);
    expect(isTestRunnerError(null)).toBe(false);
  });
});
