// The browser platform modules (ADR 0146) give the same bytes as Node's for every call the libraries make.
import * as node from 'node:crypto';
import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { Buffer as Shim } from '../src/browser/buffer.js';
import { createHash, hkdfSync, randomFillSync, timingSafeEqual } from '../src/browser/node-crypto.js';
import { defaultEngine, sodiumFor } from '../src/browser/engine.js';

const bytes = fc.uint8Array({ maxLength: 200 });
const view = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength);

describe('the browser Buffer', () => {
  test.prop([bytes])('encodes hex, Base64 and base64url as Node does, and decodes them back', (b) => {
    for (const enc of ['hex', 'base64', 'base64url'] as const) {
      const text = view(b).toString(enc);
      expect(Shim.from(b.buffer, b.byteOffset, b.byteLength).toString(enc)).toBe(text);
      expect([...Shim.from(text, enc)]).toEqual([...b]);
    }
  });

  it('decodes non-canonical Base64 as Node does, so the library re-encoding refuses it', () => {
    for (const text of ['QR==', 'QUF=', 'QUJDRB==', 'AB==']) {
      const shim = Shim.from(text, 'base64');
      expect([...shim]).toEqual([...Buffer.from(text, 'base64')]);
      expect(shim.toString('base64')).not.toBe(text);
    }
  });

  test.prop([fc.string({ unit: 'grapheme', maxLength: 50 })])('counts UTF-8 bytes as Node does', (s) => {
    expect(Shim.byteLength(s, 'utf8')).toBe(Buffer.byteLength(s, 'utf8'));
  });
});

describe('the browser node:crypto', () => {
  test.prop([fc.array(bytes, { maxLength: 5 })])('SHA-256, incremental, as Node', (parts) => {
    const a = createHash('sha256');
    const b = node.createHash('sha256');
    for (const p of parts) {
      a.update(p);
      b.update(p);
    }
    expect([...a.digest()]).toEqual([...b.digest()]);
  });

  test.prop([bytes, bytes, bytes, fc.integer({ min: 1, max: 255 })])(
    'HKDF-SHA-256 as Node',
    (ikm, salt, info, n) => {
      expect([...new Uint8Array(hkdfSync('sha256', ikm, salt, info, n))]).toEqual([
        ...new Uint8Array(node.hkdfSync('sha256', ikm, salt, info, n)),
      ]);
    },
  );

  it('fills more than 64 KiB from the CSPRNG, compares in constant time, and refuses the native paths', () => {
    const out = randomFillSync(new Uint8Array(200_000));
    expect(out.subarray(150_000).some((x) => x !== 0)).toBe(true);
    expect(timingSafeEqual(Uint8Array.of(1, 2), Uint8Array.of(1, 2))).toBe(true);
    expect(timingSafeEqual(Uint8Array.of(1, 2), Uint8Array.of(1, 3))).toBe(false);
    expect(() => createHash('sha512')).toThrow(/not in the browser build/);
    expect(defaultEngine()).toBe('js');
    expect(() => sodiumFor('sodium')).toThrow(/not in the browser build/);
  });
});
