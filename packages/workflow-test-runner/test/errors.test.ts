import { describe, expect, it } from 'vitest';
import { detailsShapeProblem, thrownBy } from '@org/test-utils';
import { isTestRunnerError, parseTestFile, TestRunnerError, TESTRUNNER_ERROR_CODES } from '../src/index.js';

describe('isTestRunnerError', () => {
  it('recognises the class by name and a known code, also across copies of the package', () => {
    expect(isTestRunnerError(new TestRunnerError('TESTRUNNER_TIMEOUT', 'x'))).toBe(true);
    expect(isTestRunnerError({ name: 'TestRunnerError', code: 'TESTRUNNER_TIMEOUT' })).toBe(true);
    expect(isTestRunnerError({ name: 'TestRunnerError', code: 'OTHER' })).toBe(false);
    expect(isTestRunnerError(new Error('x'))).toBe(false);
    expect(isTestRunnerError(null)).toBe(false);
  });
});

describe('isTestRunnerError (code-list membership)', () => {
  it('accepts every code of the frozen TESTRUNNER_ERROR_CODES, also from another loaded copy', () => {
    expect(Object.isFrozen(TESTRUNNER_ERROR_CODES)).toBe(true);
    for (const code of TESTRUNNER_ERROR_CODES)
      expect(isTestRunnerError(new TestRunnerError(code, 'm'))).toBe(true);
    expect(
      isTestRunnerError({ name: 'TestRunnerError', code: TESTRUNNER_ERROR_CODES[0], message: 'm' }),
    ).toBe(true);
  });
  it('refuses an unknown code with the right prefix, another class name and non-objects', () => {
    const prefix = TESTRUNNER_ERROR_CODES[0].split('_')[0]!;
    expect(isTestRunnerError({ name: 'TestRunnerError', code: `${prefix}_NOT_A_CODE` })).toBe(false);
    expect(isTestRunnerError({ name: 'Error', code: TESTRUNNER_ERROR_CODES[0] })).toBe(false);
    expect(isTestRunnerError(null)).toBe(false);
    expect(isTestRunnerError(TESTRUNNER_ERROR_CODES[0])).toBe(false);
  });
});

describe('TestRunnerError details (one shape across packages)', () => {
  it('are a plain object, never an array; failed fields are details.errors', () => {
    const errors = [
      thrownBy(() => parseTestFile('{"a":', 'x.test.json')),
      thrownBy(() => parseTestFile('{"nonsense":true}', 'x.test.json')),
    ];
    for (const err of errors) {
      expect(isTestRunnerError(err)).toBe(true);
      expect(detailsShapeProblem(err)).toBeUndefined();
      const fields = (err as TestRunnerError).details?.errors ?? [];
      expect(fields.length).toBeGreaterThan(0);
      for (const f of fields) expect(f.file).toBe('x.test.json');
    }
  });
});
