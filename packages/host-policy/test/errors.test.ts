import { describe, expect, it } from 'vitest';
import { detailsShapeProblem, thrownBy } from '@org/test-utils';
import type { HostEntry } from '../src/index.js';
import { compileHostPolicy, POLICY_ERROR_CODES, PolicyError, isPolicyError } from '../src/index.js';

describe('isPolicyError', () => {
  it('is a membership check of the frozen POLICY_ERROR_CODES', () => {
    expect(Object.isFrozen(POLICY_ERROR_CODES)).toBe(true);
    for (const code of POLICY_ERROR_CODES) expect(isPolicyError(new PolicyError(code, 'm'))).toBe(true);
    // Another loaded copy of the package: same name and code, another class.
    expect(isPolicyError({ name: 'PolicyError', code: POLICY_ERROR_CODES[0], message: 'm' })).toBe(true);
  });
  it('refuses an unknown code, another class name, a prefix-only match and non-objects', () => {
    const prefix = POLICY_ERROR_CODES[0].split('_')[0]!;
    expect(isPolicyError({ name: 'PolicyError', code: `${prefix}_NOT_A_CODE` })).toBe(false);
    expect(isPolicyError({ name: 'Error', code: POLICY_ERROR_CODES[0] })).toBe(false);
    expect(isPolicyError(Object.assign(new Error('m'), { code: POLICY_ERROR_CODES[0] }))).toBe(false);
    expect(isPolicyError(null)).toBe(false);
    expect(isPolicyError(POLICY_ERROR_CODES[0])).toBe(false);
  });
});

describe('PolicyError details (one shape across packages)', () => {
  it('are a plain object, never an array, on real failures', () => {
    const errors = [
      thrownBy(() => compileHostPolicy([{ id: 'x', host: 42 }] as unknown as HostEntry[])),
      thrownBy(() => compileHostPolicy('hosts' as unknown as HostEntry[])),
    ];
    for (const err of errors) {
      expect(isPolicyError(err)).toBe(true);
      expect((err as PolicyError).details).toBeDefined();
      expect(detailsShapeProblem(err)).toBeUndefined();
    }
  });
});
