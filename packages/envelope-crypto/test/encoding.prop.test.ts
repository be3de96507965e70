import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  decodeBase64,
  decodeHex,
  encodeBase64,
  encodeHex,
  isCryptoError,
  keyByteLength,
  parseKey,
  KEY_PURPOSES,
} from '../src/index.js';
import { NUM_RUNS } from './prop-runs.js';

const bytes = fc.uint8Array({ maxLength: 200 });
/** Strings drawn mostly from characters that sit near the hex and Base64 alphabets. */
const nearHex = fc.string({ unit: fc.constantFrom(...'0123456789abcdefABCDEFgG xX-\n'), maxLength: 140 });
const nearBase64 = fc.string({ unit: fc.constantFrom(...'ABCabcXYZxyz0189+/-_= \n!'), maxLength: 80 });

function codeOf(fn: () => unknown): string {
  try {
    fn();
    return 'ok';
  } catch (err) {
    return isCryptoError(err) ? err.code : `uncoded ${String(err)}`;
  }
}

describe('hex properties', () => {
  it('decodeHex(encodeHex(x)) = x, in either letter case', () => {
    fc.assert(
      fc.property(bytes, (x) => {
        expect(decodeHex(encodeHex(x))).toEqual(x);
        expect(decodeHex(encodeHex(x).toUpperCase())).toEqual(x);
        expect(encodeHex(x)).toMatch(/^[0-9a-f]*$/);
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('an arbitrary string never decodes to a key of another length: exact bytes or a coded error', () => {
    fc.assert(
      fc.property(
        fc.oneof(nearHex, fc.string({ maxLength: 80 })),
        fc.integer({ min: 0, max: 64 }),
        (s, n) => {
          let out: Uint8Array | undefined;
          const code = codeOf(() => (out = decodeHex(s, n)));
          if (code === 'ok') {
            expect(out).toHaveLength(n);
            expect(encodeHex(out!)).toBe(s.toLowerCase());
          } else {
            expect(['CRYPTO_BAD_HEX', 'CRYPTO_BAD_KEY_LENGTH']).toContain(code);
          }
        },
      ),
      { numRuns: NUM_RUNS * 3 },
    );
  });

  it('parseKey on an arbitrary keyHex returns a key of exactly the right length or a coded error', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...KEY_PURPOSES),
        fc.constantFrom('public', 'secret'),
        fc.oneof(
          nearHex,
          fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: 60, maxLength: 132 }),
        ),
        (purpose, type, keyHex) => {
          let length = 0;
          let out: Uint8Array | undefined;
          const code = codeOf(() => {
            length = keyByteLength(purpose, type);
            out = parseKey({ purpose, type, keyHex }).bytes;
          });
          if (code === 'ok') expect(out).toHaveLength(length);
          else expect(code).toMatch(/^CRYPTO_/);
        },
      ),
      { numRuns: NUM_RUNS * 3 },
    );
  });
});

describe('Base64 properties', () => {
  it('decodeBase64(encodeBase64(x)) = x', () => {
    fc.assert(
      fc.property(bytes, (x) => {
        expect(decodeBase64(encodeBase64(x))).toEqual(x);
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('an arbitrary string decodes only if it is the canonical encoding of its bytes; otherwise CRYPTO_BAD_BASE64', () => {
    fc.assert(
      fc.property(
        fc.oneof(nearBase64, fc.base64String({ maxLength: 40 }), fc.string({ maxLength: 40 })),
        (s) => {
          let out: Uint8Array | undefined;
          const code = codeOf(() => (out = decodeBase64(s)));
          if (code === 'ok') expect(encodeBase64(out!)).toBe(s);
          else expect(code).toBe('CRYPTO_BAD_BASE64');
        },
      ),
      { numRuns: NUM_RUNS * 3 },
    );
  });
});
