import { describe, expect, it } from 'vitest';
import { OappError } from '../src/index.js';
import { decodeHeader, decodeStatement, encodeHeader, type Header } from '../src/internal.js';

const te = new TextEncoder();
const valid: Header = {
  format: 'oapp/v1',
  packageId: 'hello-app',
  createdAt: '2026-11-01T12:00:00.000Z',
  content: { mediaType: 'application/vnd.oapp.workflow+json', size: 3, sha256: 'ab'.repeat(32) },
  packager: 'cd'.repeat(32),
  recipients: 1,
  payload: {
    aead: 'chacha20-poly1305-stream/v1',
    chunkSize: 1024,
    plaintextSize: 3,
    ciphertextSha256: 'ef'.repeat(32),
  },
};
const json = (h: unknown) => te.encode(JSON.stringify(h));

describe('decodeHeader', () => {
  it('round-trips encodeHeader, with and without an envelope chain', () => {
    expect(decodeHeader(encodeHeader(valid), 1)).toEqual({ ...valid, envelope: undefined });
    const chained = {
      ...valid,
      envelope: { chain: [{ packager: '01'.repeat(32), headerSha256: '02'.repeat(32) }] },
    };
    expect(decodeHeader(encodeHeader(chained), 1)).toEqual(chained);
  });
  it('rejects a top-level value that is not an object, and a missing member, with FORMAT_BAD_FIELD', () => {
    expect(() => decodeHeader(te.encode('[]'), 1)).toThrowCode(OappError, 'FORMAT_BAD_FIELD');
    const { createdAt: _omit, ...missing } = valid;
    expect(() => decodeHeader(json(missing), 1)).toThrowCode(OappError, 'FORMAT_BAD_FIELD');
  });
  it('rejects an empty, oversized or non-array envelope chain', () => {
    expect(() => decodeHeader(json({ ...valid, envelope: { chain: [] } }), 1)).toThrowCode(
      OappError,
      'FORMAT_BAD_FIELD',
    );
    expect(() => decodeHeader(json({ ...valid, envelope: { chain: {} } }), 1)).toThrowCode(
      OappError,
      'FORMAT_BAD_FIELD',
    );
    const link = { packager: '01'.repeat(32), headerSha256: '02'.repeat(32) };
    expect(() =>
      decodeHeader(json({ ...valid, envelope: { chain: Array.from({ length: 17 }, () => link) } }), 1),
    ).toThrowCode(OappError, 'FORMAT_BAD_FIELD');
  });
  it('rejects impossible dates that Date.parse would roll over, and a leap second', () => {
    for (const createdAt of [
      '2026-02-30T00:00:00.000Z',
      '2026-11-01T12:00:60.000Z',
      '2026-11-01T12:00:00Z',
      '2026-11-01 12:00:00.000Z',
    ]) {
      expect(() => decodeHeader(json({ ...valid, createdAt }), 1), createdAt).toThrowCode(
        OappError,
        'FORMAT_BAD_FIELD',
      );
    }
  });
  it('rejects chunk sizes that are not powers of two in range, and plaintextSize different from size', () => {
    for (const chunkSize of [1000, 512, 2 ** 21]) {
      expect(
        () => decodeHeader(json({ ...valid, payload: { ...valid.payload, chunkSize } }), 1),
        String(chunkSize),
      ).toThrowCode(OappError, 'FORMAT_BAD_FIELD');
    }
    expect(() =>
      decodeHeader(json({ ...valid, payload: { ...valid.payload, plaintextSize: 4 } }), 1),
    ).toThrowCode(OappError, 'FORMAT_BAD_FIELD');
  });
  it('rejects zero recipients, an unknown media type and uppercase or short hex', () => {
    expect(() => decodeHeader(json({ ...valid, recipients: 0 }), 1)).toThrowCode(
      OappError,
      'FORMAT_BAD_FIELD',
    );
    expect(() =>
      decodeHeader(json({ ...valid, content: { ...valid.content, mediaType: 'text/plain' } }), 1),
    ).toThrowCode(OappError, 'FORMAT_BAD_FIELD');
    expect(() => decodeHeader(json({ ...valid, packager: 'CD'.repeat(32) }), 1)).toThrowCode(
      OappError,
      'FORMAT_BAD_FIELD',
    );
    expect(() => decodeHeader(json({ ...valid, packager: 'cd'.repeat(31) }), 1)).toThrowCode(
      OappError,
      'FORMAT_BAD_FIELD',
    );
  });
  it('S100: rejects any other payload algorithm, also a non-string one, with FORMAT_UNSUPPORTED_ALGORITHM', () => {
    for (const aead of ['none', 'xchacha20-poly1305', 1, null]) {
      expect(
        () => decodeHeader(json({ ...valid, payload: { ...valid.payload, aead } }), 1),
        String(aead),
      ).toThrowCode(OappError, 'FORMAT_UNSUPPORTED_ALGORITHM');
    }
  });
});

describe('decodeStatement', () => {
  const statement = { format: 'oapp-statement/v1', packageId: 'p', content: valid.content };
  it('accepts a license object and rejects a license that is not an object', () => {
    expect(decodeStatement(json({ ...statement, license: { seats: 3, tags: ['a'] } }), 1).license).toEqual({
      seats: 3,
      tags: ['a'],
    });
    expect(() => decodeStatement(json({ ...statement, license: 'gold' }), 1)).toThrowCode(
      OappError,
      'FORMAT_BAD_FIELD',
    );
  });
});
