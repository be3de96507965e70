import { describe, expect, it } from 'vitest';
import { byteByByte, loadNegativeCorpus, offsetView } from '../src/index.js';

class DemoError extends Error {
  override readonly name = 'DemoError';
  constructor(readonly code: string) {
    super(code);
  }
}

describe('toThrowCode', () => {
  it('passes on the right class and code', () => {
    expect(() => {
      throw new DemoError('DEMO_X');
    }).toThrowCode(DemoError, 'DEMO_X');
  });
  it('fails on another code, a plain error and no error', () => {
    expect(() =>
      expect(() => {
        throw new DemoError('DEMO_Y');
      }).toThrowCode(DemoError, 'DEMO_X'),
    ).toThrow(/DEMO_Y/);
    expect(() =>
      expect(() => {
        throw new TypeError('boom');
      }).toThrowCode(DemoError, 'DEMO_X'),
    ).toThrow(/TypeError/);
    expect(() => expect(() => 1).toThrowCode(DemoError, 'DEMO_X')).toThrow(/nothing was thrown/);
  });
  it('handles rejected promises', async () => {
    await expect(Promise.reject(new DemoError('DEMO_Z'))).rejects.toThrowCode(DemoError, 'DEMO_Z');
    await expect(Promise.reject(new DemoError('DEMO_Z'))).rejects.toThrowCode('DemoError', 'DEMO_Z');
  });
});

describe('helpers', () => {
  it('byteByByte yields single bytes and offsetView keeps the content', () => {
    const b = new Uint8Array([1, 2, 3]);
    expect([...byteByByte(b)].map((x) => x.length)).toEqual([1, 1, 1]);
    const v = offsetView(b);
    expect(v.byteOffset).toBeGreaterThan(0);
    expect([...v]).toEqual([1, 2, 3]);
  });
  it('loadNegativeCorpus reads nothing from an empty folder', () => {
    expect(loadNegativeCorpus(new URL('.', import.meta.url).pathname)).toEqual([]);
  });
});
