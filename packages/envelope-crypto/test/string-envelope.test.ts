import { beforeAll, describe, expect, it } from 'vitest';
import {
  CryptoError,
  MAX_STRING_PLAINTEXT_BYTES,
  STRING_PREFIX,
  decryptString,
  encodeBase64,
  encryptString,
  isCryptoError,
  isEncryptedString,
  parseEncryptedString,
  parseKeyTuple,
  parseKeyTupleList,
  type Key,
  type KeyTuple,
} from '../src/index.js';
import { hex, offsetView, thrownBy } from '@org/test-utils';
import { fill, loadSodium } from './sodium.js';

let sodium: Awaited<ReturnType<typeof loadSodium>>;
beforeAll(async () => {
  sodium = await loadSodium();
});

const enc = (s: string) => new TextEncoder().encode(s);

/** The packager identity (sender) and two decoders (recipients), from fixed seeds. */
function parties() {
  const packager = sodium.crypto_box_seed_keypair(fill(32, 201));
  const decoder = sodium.crypto_box_seed_keypair(fill(32, 202));
  const other = sodium.crypto_box_seed_keypair(fill(32, 203));
  const key = (bytes: Uint8Array, type: 'public' | 'secret', id: string): Key => ({
    id,
    purpose: 'authenticated',
    type,
    bytes,
  });
  return {
    packager,
    decoder,
    other,
    recipient: key(decoder.publicKey, 'public', 'decoder'),
    sender: key(packager.privateKey, 'secret', 'packager'),
    good: { senderPublicKey: packager.publicKey, recipientSecretKey: decoder.privateKey } as KeyTuple,
    wrong: { senderPublicKey: packager.publicKey, recipientSecretKey: other.privateKey } as KeyTuple,
    tupleText: `${hex(packager.publicKey)}/${hex(decoder.privateKey)}`,
  };
}

function rawOf(text: string): Uint8Array {
  return new Uint8Array(Buffer.from(text.slice(STRING_PREFIX.length), 'base64'));
}

function textOf(raw: Uint8Array): string {
  return STRING_PREFIX + encodeBase64(raw);
}

describe('encryptString / decryptString', () => {
  it('round-trips and writes "-2/" followed by Base64 of nonce ‖ box', () => {
    const p = parties();
    const text = encryptString(enc('hunter2'), p.recipient, p.sender);
    expect(text.startsWith('-2/')).toBe(true);
    expect(isEncryptedString(text)).toBe(true);
    expect(rawOf(text)).toHaveLength(24 + 16 + 7);
    expect(decryptString(text, [p.good])).toEqual(enc('hunter2'));
  });

  it('gives different outputs for the same string twice; both open (S112)', () => {
    const p = parties();
    const a = encryptString(enc('same'), p.recipient, p.sender);
    const b = encryptString(enc('same'), p.recipient, p.sender);
    expect(a).not.toBe(b);
    expect(rawOf(a).subarray(0, 24)).not.toEqual(rawOf(b).subarray(0, 24));
    expect(decryptString(a, [p.good])).toEqual(enc('same'));
    expect(decryptString(b, [p.good])).toEqual(enc('same'));
  });

  it('tries candidates in order: a wrong first candidate, then the right one, opens', () => {
    const p = parties();
    const text = encryptString(enc('x'), p.recipient, p.sender);
    expect(decryptString(text, [p.wrong, p.good])).toEqual(enc('x'));
    expect(decryptString(text, [p.good, p.wrong])).toEqual(enc('x'));
  });

  it('fails with CRYPTO_AUTH_FAILED when no candidate opens it', () => {
    const p = parties();
    const text = encryptString(enc('x'), p.recipient, p.sender);
    expect(() => decryptString(text, [p.wrong])).toThrowCode(CryptoError, 'CRYPTO_AUTH_FAILED');
    // Halves swapped (S114): parses as a tuple, but never opens.
    const swapped = { senderPublicKey: p.decoder.privateKey, recipientSecretKey: p.packager.publicKey };
    expect(() => decryptString(text, [swapped])).toThrowCode(CryptoError, 'CRYPTO_AUTH_FAILED');
    // A candidate with a small-order sender key is skipped like any other non-opening key.
    const weak = { senderPublicKey: new Uint8Array(32), recipientSecretKey: p.decoder.privateKey };
    expect(() => decryptString(text, [weak])).toThrowCode(CryptoError, 'CRYPTO_AUTH_FAILED');
    expect(decryptString(text, [weak, p.good])).toEqual(enc('x'));
  });

  it('does not swallow a caller bug in a candidate (a 31-byte secret key is a RangeError)', () => {
    const p = parties();
    const text = encryptString(enc('x'), p.recipient, p.sender);
    const broken = {
      senderPublicKey: p.packager.publicKey,
      recipientSecretKey: p.decoder.privateKey.subarray(1),
    };
    expect(() => decryptString(text, [broken, p.good])).toThrow(RangeError);
  });

  it('fails with CRYPTO_NO_MATCHING_KEY for an empty candidate list', () => {
    const p = parties();
    const text = encryptString(enc('x'), p.recipient, p.sender);
    expect(() => decryptString(text, [])).toThrowCode(CryptoError, 'CRYPTO_NO_MATCHING_KEY');
  });

  it('opens a string made by libsodium (nonce ‖ crypto_box_easy), byte-level interop', () => {
    const p = parties();
    const nonce = fill(24, 204);
    const m = enc('made by libsodium ✓');
    const text = textOf(
      new Uint8Array([
        ...nonce,
        ...sodium.crypto_box_easy(m, nonce, p.decoder.publicKey, p.packager.privateKey),
      ]),
    );
    expect(decryptString(text, [p.good])).toEqual(m);
    expect(decryptString(text, parseKeyTupleList(p.tupleText))).toEqual(m);
  });

  it('makes strings libsodium opens with crypto_box_open_easy', () => {
    const p = parties();
    for (const n of [0, 1, 16, 100, 1000]) {
      const m = fill(n, n + 1);
      const { nonce, box } = parseEncryptedString(encryptString(m, p.recipient, p.sender));
      expect(sodium.crypto_box_open_easy(box, nonce, p.packager.publicKey, p.decoder.privateKey)).toEqual(m);
    }
  });

  it('accepts plaintext, keys and candidates passed as views and pooled Buffers (S118)', () => {
    const p = parties();
    const m = enc('views');
    const recipient = { ...p.recipient, bytes: offsetView(p.recipient.bytes) };
    const sender = { ...p.sender, bytes: Buffer.from(p.sender.bytes) };
    const text = encryptString(offsetView(m, 3), recipient, sender);
    const tuple = {
      senderPublicKey: offsetView(p.packager.publicKey),
      recipientSecretKey: Buffer.from(p.decoder.privateKey),
    };
    expect(decryptString(text, [tuple])).toEqual(m);
  });

  it('encrypts exactly MAX_STRING_PLAINTEXT_BYTES and rejects one more with CRYPTO_TOO_LARGE', () => {
    const p = parties();
    const max = new Uint8Array(MAX_STRING_PLAINTEXT_BYTES).fill(0x41);
    expect(decryptString(encryptString(max, p.recipient, p.sender), [p.good])).toEqual(max);
    expect(() =>
      encryptString(new Uint8Array(MAX_STRING_PLAINTEXT_BYTES + 1), p.recipient, p.sender),
    ).toThrowCode(CryptoError, 'CRYPTO_TOO_LARGE');
  });

  it('rejects keys of the wrong purpose or type, naming the field (S116)', () => {
    const p = parties();
    const signKey: Key = { ...p.recipient, purpose: 'sign' };
    expect(() => encryptString(enc('x'), signKey, p.sender)).toThrowCode(
      CryptoError,
      'CRYPTO_WRONG_KEY_PURPOSE',
    );
    expect(() => encryptString(enc('x'), p.sender, p.sender)).toThrowCode(
      CryptoError,
      'CRYPTO_WRONG_KEY_TYPE',
    );
    expect(() => encryptString(enc('x'), p.recipient, p.recipient)).toThrowCode(
      CryptoError,
      'CRYPTO_WRONG_KEY_TYPE',
    );
    const err = thrownBy(() => encryptString(enc('x'), p.recipient, p.recipient)) as CryptoError;
    expect(err.message).toContain('packagerIdentityPrivateKey');
  });

  it('refuses a small-order recipient with CRYPTO_WEAK_KEY', () => {
    const p = parties();
    const weak: Key = { ...p.recipient, bytes: new Uint8Array(32) };
    expect(() => encryptString(enc('x'), weak, p.sender)).toThrowCode(CryptoError, 'CRYPTO_WEAK_KEY');
  });

  it('rejects every single-byte flip of a short envelope with CRYPTO_AUTH_FAILED', () => {
    const p = parties();
    const raw = rawOf(encryptString(enc('ab'), p.recipient, p.sender));
    for (let i = 0; i < raw.length; i++) {
      const bad = raw.slice();
      bad[i]! ^= 1 << (i % 8);
      expect(() => decryptString(textOf(bad), [p.good])).toThrowCode(CryptoError, 'CRYPTO_AUTH_FAILED');
    }
  });
});

describe('parseEncryptedString', () => {
  const valid = () => {
    const p = parties();
    return encryptString(enc('hell'), p.recipient, p.sender);
  };

  it('splits nonce (24) and box', () => {
    const { nonce, box } = parseEncryptedString(valid());
    expect(nonce).toHaveLength(24);
    expect(box).toHaveLength(16 + 4);
  });

  it.each([
    ['another version', '-1/AAAA'],
    ['no prefix', 'AAAA'],
    ['an empty string', ''],
    ['a prefix without slash', '-2AAAA'],
    ['a leading space', ' -2/AAAA'],
  ])('rejects %s with CRYPTO_BAD_PREFIX', (_name, text) => {
    expect(() => parseEncryptedString(text)).toThrowCode(CryptoError, 'CRYPTO_BAD_PREFIX');
    expect(() => decryptString(text, [parties().good])).toThrowCode(CryptoError, 'CRYPTO_BAD_PREFIX');
  });

  it('rejects a non-string with CRYPTO_BAD_PREFIX', () => {
    expect(() => parseEncryptedString(42 as unknown as string)).toThrowCode(CryptoError, 'CRYPTO_BAD_PREFIX');
  });

  it.each([
    ['a space', (b: string) => `${b.slice(0, 10)} ${b.slice(10)}`],
    ['a newline', (b: string) => `${b.slice(0, 12)}\n${b.slice(12)}`],
    ['a trailing newline', (b: string) => `${b}\n`],
    ['!!!!', (b: string) => `${b.slice(0, 8)}!!!!${b.slice(8)}`],
    [
      'URL-safe characters',
      (b: string) => b.replace(/[+/]/g, (c) => (c === '+' ? '-' : '_')).replace(/^./, '_'),
    ],
    ['missing padding', (b: string) => b.replace(/=+$/, '')],
    ['extra padding', (b: string) => `${b}==`],
  ])('rejects data with %s with CRYPTO_BAD_BASE64 (S61)', (_name, mutate) => {
    const text = valid();
    const body = text.slice(STRING_PREFIX.length);
    expect(body).toMatch(/[^=]=$/); // 44 bytes: one padding character
    expect(() => parseEncryptedString(STRING_PREFIX + mutate(body))).toThrowCode(
      CryptoError,
      'CRYPTO_BAD_BASE64',
    );
  });

  it('rejects non-zero trailing bits with CRYPTO_BAD_BASE64 (S62)', () => {
    const p = parties();
    // 40 raw bytes (empty plaintext) end in "xx==": the last data character has 4 unused bits.
    const text = encryptString(enc(''), p.recipient, p.sender);
    expect(text).toMatch(/==$/);
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
    const i = text.length - 3;
    const flipped = alphabet[alphabet.indexOf(text[i]!) ^ 1]!;
    const bad = text.slice(0, i) + flipped + text.slice(i + 1);
    expect(Buffer.from(bad.slice(3), 'base64')).toEqual(Buffer.from(text.slice(3), 'base64'));
    expect(() => parseEncryptedString(bad)).toThrowCode(CryptoError, 'CRYPTO_BAD_BASE64');
    expect(() => decryptString(bad, [p.good])).toThrowCode(CryptoError, 'CRYPTO_BAD_BASE64');
  });

  it.each([0, 1, 24, 39])(
    'rejects %i decoded bytes (fewer than nonce + tag) with CRYPTO_TRUNCATED (S47)',
    (n) => {
      const text = textOf(fill(n, n + 1));
      expect(() => parseEncryptedString(text)).toThrowCode(CryptoError, 'CRYPTO_TRUNCATED');
      expect(() => decryptString(text, [parties().good])).toThrowCode(CryptoError, 'CRYPTO_TRUNCATED');
    },
  );

  it('never returns data for a tag cut to 4 bytes (S47)', () => {
    const p = parties();
    for (const m of [enc(''), enc('secret value that is long enough to hide a tag')]) {
      const raw = rawOf(encryptString(m, p.recipient, p.sender));
      const cuts = [
        raw.subarray(0, 24 + 4), // nonce ‖ first 4 tag bytes
        new Uint8Array([...raw.subarray(0, 28), ...raw.subarray(40)]), // tag cut to 4, ciphertext kept
        raw.subarray(0, raw.length - 12), // last 12 bytes dropped
      ];
      for (const cut of cuts) {
        const err = thrownBy(() => decryptString(textOf(cut), [p.good]));
        expect(isCryptoError(err)).toBe(true);
        expect(['CRYPTO_TRUNCATED', 'CRYPTO_AUTH_FAILED']).toContain((err as CryptoError).code);
      }
    }
  });

  it('rejects a string longer than the limit with CRYPTO_TOO_LARGE before decoding', () => {
    const text = STRING_PREFIX + 'A'.repeat(4 * Math.ceil((MAX_STRING_PLAINTEXT_BYTES + 40) / 3) + 4);
    expect(() => parseEncryptedString(text)).toThrowCode(CryptoError, 'CRYPTO_TOO_LARGE');
  });
});

describe('isEncryptedString', () => {
  it('looks at the prefix only', () => {
    expect(isEncryptedString('-2/anything')).toBe(true);
    expect(isEncryptedString('-2')).toBe(false);
    expect(isEncryptedString(undefined)).toBe(false);
    expect(isEncryptedString({ toString: () => '-2/x' })).toBe(false);
  });
});

describe('parseKeyTuple', () => {
  it('parses <sender public key hex>/<secret key hex> in either case, trimmed', () => {
    const p = parties();
    const t = parseKeyTuple(`  ${p.tupleText.toUpperCase()}\n`);
    expect(t.senderPublicKey).toEqual(p.packager.publicKey);
    expect(t.recipientSecretKey).toEqual(p.decoder.privateKey);
  });

  it('rejects a small-order sender key with CRYPTO_BAD_KEY_TUPLE', () => {
    const p = parties();
    expect(() => parseKeyTuple(`${'00'.repeat(32)}/${hex(p.decoder.privateKey)}`)).toThrowCode(
      CryptoError,
      'CRYPTO_BAD_KEY_TUPLE',
    );
  });
});

describe('parseKeyTupleList', () => {
  it('ignores empty entries after trimming (S45)', () => {
    const p = parties();
    const list = parseKeyTupleList(` , ${p.tupleText} ,, `);
    expect(list).toHaveLength(1);
    expect(list[0]).toEqual(p.good);
    expect(parseKeyTupleList('')).toEqual([]);
    expect(parseKeyTupleList(' , ,')).toEqual([]);
  });

  const badSecond = () => {
    const p = parties();
    const pub = hex(p.packager.publicKey);
    const sec = hex(p.decoder.privateKey);
    return {
      p,
      cases: [
        ['a 62-character key', `${pub}/${sec.slice(0, 62)}`],
        ['a 62-character sender key', `${pub.slice(0, 62)}/${sec}`],
        ['no "/"', `${pub}${sec}`],
        ['two "/"', `${pub}/${sec}/${sec}`],
        ['a non-hex character', `${pub}/${sec.slice(0, 20)}g${sec.slice(21)}`],
        ['an empty secret half', `${pub}/`],
      ] as const,
      material: [pub, sec],
    };
  };

  const BAD_ENTRY_NAMES = [
    'a 62-character key',
    'a 62-character sender key',
    'no "/"',
    'two "/"',
    'a non-hex character',
    'an empty secret half',
  ];

  it.each(BAD_ENTRY_NAMES.map((name) => [name]))(
    'rejects an entry with %s with CRYPTO_BAD_KEY_TUPLE naming "entry 2", no key material (S45)',
    (name) => {
      const { p, cases, material } = badSecond();
      const bad = cases.find(([n]) => n === name)![1];
      expect(cases).toHaveLength(BAD_ENTRY_NAMES.length);
      const text = ` ${p.tupleText} , ${bad} `;
      expect(() => parseKeyTupleList(text)).toThrowCode(CryptoError, 'CRYPTO_BAD_KEY_TUPLE');
      const err = thrownBy(() => parseKeyTupleList(text)) as CryptoError;
      expect(err.message).toContain('entry 2');
      expect(err.details).toEqual({ position: 2 });
      const shown = `${err.message} ${JSON.stringify(err.details)}`;
      for (const h of material)
        for (let i = 0; i + 16 <= h.length; i += 8) expect(shown).not.toContain(h.slice(i, i + 16));
    },
  );

  it('counts empty entries in positions', () => {
    const p = parties();
    const err = thrownBy(() => parseKeyTupleList(`,${p.tupleText},,nonsense`)) as CryptoError;
    expect(err.code).toBe('CRYPTO_BAD_KEY_TUPLE');
    expect(err.message).toContain('entry 4');
  });
});
