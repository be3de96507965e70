import { describe, expect, it } from 'vitest';
import { routeCallUrl, TestRunnerError } from '../src/index.js';

describe('routeCallUrl', () => {
  const ports = new Map([[11000, 43123]]);
  it('maps a configured server port to the bound loopback port, keeping path and query', () => {
    expect(routeCallUrl('http://localhost:11000/hello?x=1', ports)).toBe('http://127.0.0.1:43123/hello?x=1');
  });
  it('refuses other hosts and unknown ports with TESTRUNNER_TEST_INVALID', () => {
    expect(() => routeCallUrl('http://example.com:11000/', ports)).toThrowCode(
      TestRunnerError,
      'TESTRUNNER_TEST_INVALID',
    );
    expect(() => routeCallUrl('http://localhost:11001/', ports)).toThrowCode(
      TestRunnerError,
      'TESTRUNNER_TEST_INVALID',
    );
  });
});
