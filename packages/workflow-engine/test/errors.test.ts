import { describe, expect, it } from 'vitest';
import { ENGINE_ERROR_CODES, EngineError, isEngineError } from '../src/index.js';

describe('isEngineError', () => {
  it('is a membership check of the frozen ENGINE_ERROR_CODES', () => {
    expect(Object.isFrozen(ENGINE_ERROR_CODES)).toBe(true);
    for (const code of ENGINE_ERROR_CODES) expect(isEngineError(new EngineError(code, 'm'))).toBe(true);
    // Another loaded copy of the package: same name and code, another class.
    expect(isEngineError({ name: 'EngineError', code: ENGINE_ERROR_CODES[0], message: 'm' })).toBe(true);
  });
  it('refuses an unknown code, another class name, a prefix-only match and non-objects', () => {
    const prefix = ENGINE_ERROR_CODES[0].split('_')[0]!;
    expect(isEngineError({ name: 'EngineError', code: `${prefix}_NOT_A_CODE` })).toBe(false);
    expect(isEngineError({ name: 'Error', code: ENGINE_ERROR_CODES[0] })).toBe(false);
    expect(isEngineError(Object.assign(new Error('m'), { code: ENGINE_ERROR_CODES[0] }))).toBe(false);
    expect(isEngineError(null)).toBe(false);
    expect(isEngineError(ENGINE_ERROR_CODES[0])).toBe(false);
  });
});
