// Unit tests of internal building blocks for the branches that whole-package tests cannot reach
// (limits enforced again below the section caps, defensive input checks).
import { describe, expect, it } from 'vitest';
import { ByteReader } from '../src/internal/byte-reader.js';
import { decodeStanzas } from '../src/recipients.js';
import { decodeSignatures, encodeSignatures, type SignatureRecord } from '../src/signatures.js';
import { OappError, parseStrictJson, trustedKey } from '../src/index.js';
import { STANZA_BYTES } from '../src/internal.js';
import { readSectionHeader } from '../src/frame.js';

describe('decodeStanzas', () => {
  it('rejects more than 1024 stanzas with FORMAT_TOO_MANY_RECIPIENTS even without the section cap', () => {
    expect(() => decodeStanzas(new Uint8Array(1025 * STANZA_BYTES), 1025)).toThrowCode(
      OappError,
      'FORMAT_TOO_MANY_RECIPIENTS',
    );
  });
});

describe('encodeSignatures / decodeSignatures', () => {
  const record: SignatureRecord = {
    publicKey: new Uint8Array(32).fill(7),
    signText: 'é',
    signature: new Uint8Array(64).fill(9),
  };
  it('round-trips records', () => {
    expect(decodeSignatures(encodeSignatures([record, record]))).toEqual([record, record]);
  });
  it('refuses to write more than 64 records', () => {
    expect(() => encodeSignatures(Array.from({ length: 65 }, () => record))).toThrowCode(
      OappError,
      'FORMAT_TOO_MANY_SIGNATURES',
    );
  });
  it('rejects a signTextLength above 1024 and a signText that is not UTF-8 with FORMAT_BAD_SIGNATURES', () => {
    const long = new Uint8Array(98 + 1025);
    new DataView(long.buffer).setUint16(32, 1025);
    expect(() => decodeSignatures(long)).toThrowCode(OappError, 'FORMAT_BAD_SIGNATURES');
    const bad = encodeSignatures([{ ...record, signText: 'ab' }]);
    bad.set([0xc3, 0x28], 34);
    expect(() => decodeSignatures(bad)).toThrowCode(OappError, 'FORMAT_BAD_SIGNATURES');
  });
});

describe('ByteReader', () => {
  it('treats a source that yields something other than bytes as a caller bug (TypeError)', async () => {
    const r = new ByteReader(['not bytes'] as unknown as Uint8Array[]);
    await expect(r.readExact(1, 'x')).rejects.toThrow(TypeError);
  });
  it('joins chunks across boundaries and reports the end', async () => {
    const r = new ByteReader(
      (async function* () {
        await Promise.resolve();
        yield Uint8Array.of(1, 2);
        yield new Uint8Array(0);
        yield Uint8Array.of(3);
      })(),
    );
    expect([...(await r.readExact(3, 'x'))]).toEqual([1, 2, 3]);
    expect(await r.atEnd()).toBe(true);
    await expect(r.readExact(1, 'the end')).rejects.toThrowCode(OappError, 'FORMAT_TRUNCATED');
  });
});

describe('parseStrictJson escapes', () => {
  const parse = (s: string) => parseStrictJson(new TextEncoder().encode(s), { what: 'T', maxBytes: 100 });
  it('rejects a backslash at the end of the text and a bad \\u escape', () => {
    expect(() => parse('"\\')).toThrowCode(OappError, 'FORMAT_JSON_INVALID');
    expect(() => parse('"\\u12G4"')).toThrowCode(OappError, 'FORMAT_JSON_INVALID');
  });
});

describe('readSectionHeader', () => {
  it('names tag 0 and tags above 5 as unknown with FORMAT_BAD_SECTIONS', async () => {
    for (const tag of [0, 6, 255]) {
      const err = await readSectionHeader(new ByteReader([Uint8Array.of(tag, 0, 0, 0, 1)]), 1).catch(
        (e: unknown) => e,
      );
      expect(err).toMatchObject({
        code: 'FORMAT_BAD_SECTIONS',
        message: expect.stringContaining(`unknown section tag ${tag}`) as unknown,
      });
    }
  });
});

describe('trustedKey', () => {
  it('decodes strict hex of 32 bytes', () => {
    expect(trustedKey('k', 'AB'.repeat(32)).publicKey).toEqual(new Uint8Array(32).fill(0xab));
    expect(() => trustedKey('k', 'ab'.repeat(31))).toThrowCode('CryptoError', 'CRYPTO_BAD_KEY_LENGTH');
  });
});
