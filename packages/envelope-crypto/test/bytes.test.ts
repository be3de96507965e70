import { describe, expect, it, vi } from 'vitest';
import { assertBytes, concatBytes, equalBytes, randomBytes, wipe } from '../src/index.js';
import { sodium } from '../src/internal/sodium.js';
import { offsetView, thrownBy } from '@org/test-utils';

describe('equalBytes', () => {
  it('compares contents, not identity or offsets (S118)', () => {
    const a = new Uint8Array([1, 2, 3]);
    expect(equalBytes(a, new Uint8Array([1, 2, 3]))).toBe(true);
    expect(equalBytes(offsetView(a), Buffer.from(a))).toBe(true);
    expect(equalBytes(new Uint8Array(0), new Uint8Array(0))).toBe(true);
  });

  it('is false for different contents or lengths', () => {
    expect(equalBytes(new Uint8Array([1, 2, 3]), new Uint8Array([1, 2, 4]))).toBe(false);
    expect(equalBytes(new Uint8Array([1, 2, 3]), new Uint8Array([1, 2]))).toBe(false);
    expect(equalBytes(new Uint8Array([0]), new Uint8Array(0))).toBe(false);
  });

  it('throws TypeError for non-Uint8Array arguments (caller bug)', () => {
    expect(() => equalBytes([1] as unknown as Uint8Array, new Uint8Array([1]))).toThrow(TypeError);
    expect(() => equalBytes(new Uint8Array([1]), 'a' as unknown as Uint8Array)).toThrow(TypeError);
  });
});

describe('randomBytes', () => {
  it('returns the requested length, also above 64 KiB, and differs between calls', () => {
    expect(randomBytes(0)).toHaveLength(0);
    expect(randomBytes(32)).toHaveLength(32);
    expect(randomBytes(65_537)).toHaveLength(65_537);
    expect(randomBytes(32)).not.toEqual(randomBytes(32));
  });

  it("draws from libsodium's randombytes_buf where sodium-native loaded (test/fallback.test.ts: node:crypto)", () => {
    expect(sodium).toBeDefined();
    const spy = vi.spyOn(sodium!, 'randombytes_buf');
    try {
      const out = randomBytes(24);
      expect(spy).toHaveBeenCalledTimes(1);
      expect(spy.mock.calls[0]![0]).toBe(out);
      randomBytes(0); // nothing to fill: not called
      expect(spy).toHaveBeenCalledTimes(1);
    } finally {
      spy.mockRestore();
    }
  });

  it.each([-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY])('throws RangeError for %s (caller bug)', (n) => {
    expect(() => randomBytes(n)).toThrow(RangeError);
  });
});

describe('concatBytes', () => {
  it('concatenates views into a fresh array', () => {
    const a = offsetView(new Uint8Array([1, 2]));
    const out = concatBytes(a, new Uint8Array(0), Buffer.from([3]));
    expect(out).toEqual(new Uint8Array([1, 2, 3]));
    expect(out.byteOffset).toBe(0);
    expect(concatBytes()).toEqual(new Uint8Array(0));
  });
});

describe('wipe', () => {
  it('zeroes every array and only the bytes of a view', () => {
    const big = new Uint8Array([9, 9, 9, 9]);
    const a = new Uint8Array([1, 2]);
    wipe(a, big.subarray(1, 3), undefined);
    expect(a).toEqual(new Uint8Array(2));
    expect(big).toEqual(new Uint8Array([9, 0, 0, 9]));
  });
});

describe('assertBytes', () => {
  it('accepts a Uint8Array or Buffer of the right length', () => {
    expect(() => assertBytes(new Uint8Array(3), 3, 'x')).not.toThrow();
    expect(() => assertBytes(Buffer.alloc(5), undefined, 'x')).not.toThrow();
  });

  it('throws TypeError naming the argument for a non-Uint8Array', () => {
    expect(() => assertBytes([1, 2, 3], 3, 'nonce')).toThrow(TypeError);
    expect(() => assertBytes(new Uint16Array(3), 3, 'nonce')).toThrow(TypeError);
    expect((thrownBy(() => assertBytes(new Uint16Array(3), 3, 'nonce')) as Error).message).toMatch(
      /^nonce: /,
    );
  });

  it('throws RangeError naming the argument and both lengths for a wrong length', () => {
    expect(() => assertBytes(new Uint8Array(2), 3, 'nonce')).toThrow(RangeError);
    expect((thrownBy(() => assertBytes(new Uint8Array(2), 3, 'nonce')) as Error).message).toBe(
      'nonce: expected 3 bytes, got 2',
    );
  });
});
