import { createReadStream } from 'node:fs';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CryptoError, sha256 } from '@org/envelope-crypto';
import { asAsync, byteByByte, chunked } from '@org/test-utils';
import { assemblePackage, buildStatement } from '../src/create.js';
import { streamPackage, writePackageWith, type WritePackageOptions } from '../src/create-stream.js';
import {
  OappError,
  createPackageStream,
  openPackage,
  openPackageToSink,
  writePackage,
  type ContentSource,
  type CreatePackageStreamOptions,
  type PackageKind,
  type PackageSink,
} from '../src/index.js';
import { writerRelease } from '../src/release.js';
import { signStatement } from '../src/signatures.js';
import { encodeStatement } from '../src/statement.js';
import { seeded } from '../testdata/rogue.js';
import {
  FIXED_TIME,
  deployment,
  otherDeployment,
  reviewerA,
  vendorPackager,
  vendorPolicy,
  vendorSigner,
} from './fixtures.js';
import { flipByte, sectionsOf } from './package-surgery.js';

const C = 1024;
const opts = { policy: vendorPolicy(), recipientSecretKey: deployment.secretKey };
const SIGNERS = [
  { secretKey: vendorSigner.secretKey, signText: 'released by vendor' },
  { secretKey: reviewerA.secretKey, signText: 'reviewed by A — ✓' },
];
const base = {
  packageId: 'hello-app',
  packagerSecretKey: vendorPackager.secretKey,
  recipients: [otherDeployment.publicKey, deployment.publicKey],
  signers: SIGNERS,
  createdAt: FIXED_TIME,
  chunkSize: C,
};

/** n deterministic, non-repeating bytes. */
function bytesOf(n: number, label = 'content'): Uint8Array {
  return seeded(label)(n);
}

/** What createPackage produces, with the same seeded randomness (the production assembler, as the vectors use). */
function reference(
  content: Uint8Array,
  seed: string,
  kind: PackageKind = 'app',
  license?: Record<string, unknown>,
) {
  const statement = buildStatement(
    kind,
    base.packageId,
    content,
    license,
    writerRelease({ createdAt: FIXED_TIME }),
  );
  const statementBytes = encodeStatement(statement);
  return assemblePackage({
    kind,
    statement,
    statementBytes,
    signatures: SIGNERS.map((s) => signStatement(kind, statementBytes, s.secretKey, s.signText, 2)),
    content,
    packagerSecretKey: base.packagerSecretKey,
    recipients: base.recipients,
    createdAt: FIXED_TIME,
    chunkSize: C,
    random: seeded(seed),
  });
}

async function collect(it: AsyncIterable<Uint8Array>): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  for await (const p of it) parts.push(p);
  return Buffer.concat(parts);
}

/** An in-memory random-access sink that records every write. */
function memorySink(): PackageSink & { bytes(): Uint8Array; writes: [number, number][] } {
  let buf = new Uint8Array(0);
  const writes: [number, number][] = [];
  return {
    writes,
    write(bytes, position) {
      writes.push([position, bytes.length]);
      if (position + bytes.length > buf.length) {
        const grown = new Uint8Array(position + bytes.length);
        grown.set(buf);
        buf = grown;
      }
      buf.set(bytes, position);
    },
    bytes: () => buf,
  };
}

async function written(options: WritePackageOptions, seed: string): Promise<Uint8Array> {
  const sink = memorySink();
  const result = await writePackageWith(options, sink, seeded(seed));
  expect(result.length).toBe(sink.bytes().length);
  return sink.bytes();
}

const same = (a: Uint8Array, b: Uint8Array) => Buffer.from(a).equals(Buffer.from(b));
// 70 chunks: more than the tag log's first allocation (64 tags).
const SIZES = [0, 1, C - 1, C, C + 1, 2 * C, 5 * C - 7, 7 * C, 70 * C + 3];

describe('createPackageStream', () => {
  it('produces exactly the bytes of createPackage for the same randomness, at every size around chunk edges', async () => {
    for (const n of SIZES) {
      const content = bytesOf(n);
      const stream = await collect(streamPackage({ ...base, content: () => [content] }, seeded(`s${n}`)));
      expect(same(stream, reference(content, `s${n}`)), `size ${n}`).toBe(true);
    }
  });

  it('gives the same bytes whatever the piece sizes of the source, sync or async', async () => {
    const content = bytesOf(3 * C + 5);
    const want = reference(content, 'pieces');
    const sources: (() => ContentSource)[] = [
      () => byteByByte(content),
      () => chunked(content, 7),
      () => asAsync(chunked(content, 1000)),
      () => asAsync(chunked(content, 5 * C)),
      () => [content.subarray(0, 0), content.subarray(0, C), content.subarray(C)],
    ];
    for (const [i, source] of sources.entries()) {
      const got = await collect(streamPackage({ ...base, content: source }, seeded('pieces')));
      expect(same(got, want), `source ${i}`).toBe(true);
    }
  });

  it('matches createPackage for a bootstrap kind and a license too', async () => {
    const content = bytesOf(2 * C + 1);
    const license = { holder: 'acme', seats: 5 };
    const got = await collect(
      streamPackage({ ...base, kind: 'bootstrap', license, content: () => [content] }, seeded('b')),
    );
    expect(same(got, reference(content, 'b', 'bootstrap', license))).toBe(true);
  });

  it('round-trips through openPackage with fresh randomness and the default chunk size', async () => {
    const content = bytesOf(200_000);
    const { chunkSize: _c, ...defaults } = base;
    const pkg = await collect(createPackageStream({ ...defaults, content: () => chunked(content, 4096) }));
    expect(same((await openPackage(pkg, opts)).content, content)).toBe(true);
    expect(new DataView(pkg.buffer).getUint32(sectionsOf(pkg).payload.valueOffset - 4)).toBe(
      200_000 + 4 * 16,
    );
  });

  it('reads the content twice and emits the prefix first, then one sealed chunk at a time', async () => {
    let opened = 0;
    const content = bytesOf(3 * C);
    const parts: number[] = [];
    for await (const p of createPackageStream({ ...base, content: () => (opened++, [content]) }))
      parts.push(p.length);
    expect(opened).toBe(2);
    expect(parts.slice(1)).toEqual([C + 16, C + 16, C + 16]);
  });

  it('checks its arguments before it returns, without opening the content', () => {
    let opened = 0;
    const content = () => (opened++, [new Uint8Array(1)]);
    expect(() => createPackageStream({ ...base, content, recipients: [] })).toThrowCode(
      OappError,
      'FORMAT_BAD_ARGUMENT',
    );
    expect(() => createPackageStream({ ...base, content, chunkSize: 1000 })).toThrowCode(
      OappError,
      'FORMAT_BAD_ARGUMENT',
    );
    expect(() =>
      createPackageStream({ ...base, content, signers: [{ ...SIGNERS[0]!, signText: 'x'.repeat(1025) }] }),
    ).toThrowCode(OappError, 'FORMAT_BAD_ARGUMENT');
    expect(() => createPackageStream({ ...base, content, packageId: '' })).toThrowCode(
      OappError,
      'FORMAT_BAD_FIELD',
    );
    expect(() => createPackageStream({ ...base, content, kind: 'toString' as PackageKind })).toThrowCode(
      OappError,
      'FORMAT_BAD_ARGUMENT',
    );
    expect(() =>
      createPackageStream({ ...base, content: [new Uint8Array(1)] as unknown as () => ContentSource }),
    ).toThrowCode(OappError, 'FORMAT_BAD_ARGUMENT');
    expect(() =>
      createPackageStream({ ...base, content, signers: Array.from({ length: 65 }, () => SIGNERS[0]!) }),
    ).toThrowCode(OappError, 'FORMAT_TOO_MANY_SIGNATURES');
    expect(() =>
      createPackageStream({ ...base, content, recipients: [deployment.publicKey, deployment.publicKey] }),
    ).toThrowCode(OappError, 'FORMAT_BAD_ARGUMENT');
    expect(() =>
      createPackageStream({ ...base, content, license: [] as unknown as Record<string, unknown> }),
    ).toThrowCode(OappError, 'FORMAT_BAD_ARGUMENT');
    expect(() =>
      createPackageStream({ ...base, content, packagerSecretKey: deployment.publicKey }),
    ).toThrowCode(CryptoError, 'CRYPTO_WRONG_KEY_TYPE');
    expect(() =>
      createPackageStream({
        ...base,
        content,
        signers: [{ secretKey: vendorPackager.secretKey, signText: 'x' }],
      }),
    ).toThrowCode(CryptoError, 'CRYPTO_WRONG_KEY_PURPOSE');
    expect(() => createPackageStream({ ...base, content, recipients: [vendorSigner.publicKey] })).toThrowCode(
      CryptoError,
      'CRYPTO_WRONG_KEY_PURPOSE',
    );
    expect(opened).toBe(0);
  });

  it('fails, before emitting the changed chunk, when the content changes between the two reads', async () => {
    const first = bytesOf(5 * C);
    const second = first.slice();
    second[2 * C + 3]! ^= 1;
    let reads = 0;
    const emitted: number[] = [];
    const run = async () => {
      const options: CreatePackageStreamOptions = {
        ...base,
        content: () => [reads++ === 0 ? first : second],
      };
      for await (const p of createPackageStream(options)) emitted.push(p.length);
    };
    await expect(run()).rejects.toThrowCode(OappError, 'FORMAT_BAD_ARGUMENT');
    // The prefix and chunks 0 and 1 (identical in both reads), never chunk 2 under a reused nonce.
    expect(emitted.slice(1)).toEqual([C + 16, C + 16]);
  });

  it('fails when the second read is longer or shorter than the first', async () => {
    for (const delta of [1, -1, C, -C]) {
      const first = bytesOf(3 * C);
      const second = bytesOf(3 * C + delta);
      let reads = 0;
      const stream = createPackageStream({ ...base, content: () => [reads++ === 0 ? first : second] });
      await expect(collect(stream), `delta ${delta}`).rejects.toThrowCode(OappError, 'FORMAT_BAD_ARGUMENT');
    }
  });
});

describe('writePackage', () => {
  it('produces exactly the bytes of createPackage for the same randomness, at every size around chunk edges', async () => {
    for (const n of SIZES) {
      const content = bytesOf(n);
      const got = await written({ ...base, content: chunked(content, 333), contentSize: n }, `w${n}`);
      expect(same(got, reference(content, `w${n}`)), `size ${n}`).toBe(true);
    }
  });

  it('writes the payload in one pass and the prefix last, at offset 0', async () => {
    const sink = memorySink();
    const content = bytesOf(3 * C);
    await writePackage({ ...base, content: asAsync([content]), contentSize: content.length }, sink);
    expect(sink.writes.map(([, len]) => len).slice(0, 3)).toEqual([C + 16, C + 16, C + 16]);
    expect(sink.writes.at(-1)?.[0]).toBe(0);
    expect(sink.writes[0]?.[0]).toBe(sink.writes.at(-1)?.[1]);
    expect(same((await openPackage(sink.bytes(), opts)).content, content)).toBe(true);
  });

  it('fails when the content is not contentSize bytes, and never writes the prefix', async () => {
    for (const [n, size] of [
      [3 * C, 3 * C + 1],
      [3 * C + 1, 3 * C],
      [0, 1],
      [1, 0],
      [2 * C, C],
    ] as const) {
      const sink = memorySink();
      await expect(
        writePackage({ ...base, content: [bytesOf(n)], contentSize: size }, sink),
        `${n} vs ${size}`,
      ).rejects.toThrowCode(OappError, 'FORMAT_BAD_ARGUMENT');
      expect(sink.writes.some(([pos]) => pos === 0)).toBe(false);
    }
  });

  it('refuses a bad contentSize before reading the content', async () => {
    for (const contentSize of [-1, 1.5, Number.NaN, 4_026_531_841]) {
      let pulled = false;
      const content = (function* () {
        pulled = true;
        yield new Uint8Array(1);
      })();
      await expect(writePackage({ ...base, content, contentSize }, memorySink())).rejects.toThrowCode(
        OappError,
        'FORMAT_BAD_ARGUMENT',
      );
      expect(pulled).toBe(false);
    }
  });

  it('works without signers and with the default creation time', async () => {
    const sink = memorySink();
    const { signers: _s, createdAt: _t, ...rest } = base;
    const before = Date.now();
    await writePackage({ ...rest, content: [bytesOf(10)], contentSize: 10 }, sink);
    const opened = await openPackage(sink.bytes(), {
      ...opts,
      policy: vendorPolicy({ requiredSigners: [] }),
    });
    expect(opened.parsed.signatures).toEqual([]);
    expect(Date.parse(opened.parsed.header.createdAt)).toBeGreaterThanOrEqual(before - 1);
  });

  it('passes a sink failure through', async () => {
    const sink: PackageSink = {
      write: () => Promise.reject(new Error('disk full')),
    };
    await expect(writePackage({ ...base, content: [bytesOf(10)], contentSize: 10 }, sink)).rejects.toThrow(
      'disk full',
    );
  });

  it('matches createPackage for random sizes and piece sizes', async () => {
    await fc.assert(
      fc.asyncProperty(fc.nat(6 * C), fc.integer({ min: 1, max: 3 * C }), async (n, piece) => {
        const content = bytesOf(n, `p${n}`);
        const got = await written({ ...base, content: chunked(content, piece), contentSize: n }, 'prop');
        return same(got, reference(content, 'prop'));
      }),
      { numRuns: process.env['SLOW'] ? 200 : 15 },
    );
  });
});

describe('writePackage and openPackageToSink with files', () => {
  let dir = '';
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'oapp-stream-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('packages a file into a file handle and opens it from a read stream into a sink', async () => {
    const content = bytesOf(300_000);
    const path = join(dir, 'app.oapp');
    const fh = await open(path, 'w');
    try {
      await writePackage(
        {
          ...base,
          chunkSize: 65_536,
          content: asAsync(chunked(content, 65_536)),
          contentSize: content.length,
        },
        { write: async (b, pos) => void (await fh.write(b, 0, b.length, pos)) },
      );
    } finally {
      await fh.close();
    }
    const parts: Uint8Array[] = [];
    const v = await openPackageToSink(createReadStream(path), opts, (c) => void parts.push(c));
    expect(v.signers.required.length).toBe(1);
    expect(sha256(Buffer.concat(parts))).toEqual(sha256(content));
  });
});

describe('openPackageToSink', () => {
  async function pkgOf(content: Uint8Array, seed = 'open'): Promise<Uint8Array> {
    return written({ ...base, content: [content], contentSize: content.length }, seed);
  }

  it('S85: a flipped tag in chunk 3 of 5 fails; the sink saw only the two verified chunks', async () => {
    const pkg = await pkgOf(bytesOf(5 * C - 100));
    const p0 = sectionsOf(pkg).payload.valueOffset;
    const seen: number[] = [];
    await expect(
      openPackageToSink([flipByte(pkg, p0 + 3 * (C + 16) - 1)], opts, (c) => void seen.push(c.length)),
    ).rejects.toThrowCode(OappError, 'CRYPTO_AUTH_FAILED');
    expect(seen).toEqual([C, C]);
  });

  it('a tampered last chunk fails with CRYPTO_AUTH_FAILED and its plaintext never reaches the sink', async () => {
    const content = bytesOf(3 * C + 10);
    const pkg = await pkgOf(content);
    let received = 0;
    await expect(
      openPackageToSink([flipByte(pkg, pkg.length - 20)], opts, (c) => void (received += c.length)),
    ).rejects.toThrowCode(OappError, 'CRYPTO_AUTH_FAILED');
    expect(received).toBe(3 * C);
  });

  it('a payload swapped by an insider (valid tags) fails at the end, before the last chunk reaches the sink', async () => {
    // Same seed → same file key: the swapped payload authenticates chunk by chunk, as another recipient's would.
    const a = await pkgOf(bytesOf(3 * C + 10, 'a'), 'insider');
    const b = await pkgOf(bytesOf(3 * C + 10, 'b'), 'insider');
    const p0 = sectionsOf(a).payload.valueOffset;
    const forged = Buffer.concat([a.subarray(0, p0), b.subarray(p0)]);
    let received = 0;
    await expect(openPackageToSink([forged], opts, (c) => void (received += c.length))).rejects.toThrowCode(
      OappError,
      'CRYPTO_CIPHERTEXT_MISMATCH',
    );
    expect(received).toBe(3 * C);
  });

  it('trailing bytes fail with FORMAT_TRAILING_DATA before the last chunk reaches the sink', async () => {
    const pkg = await pkgOf(bytesOf(C + 1));
    let received = 0;
    await expect(
      openPackageToSink([pkg, Uint8Array.of(0)], opts, (c) => void (received += c.length)),
    ).rejects.toThrowCode(OappError, 'FORMAT_TRAILING_DATA');
    expect(received).toBe(C);
  });

  it('delivers an empty content as one empty chunk after verification', async () => {
    const seen: number[] = [];
    await openPackageToSink([await pkgOf(new Uint8Array(0))], opts, (c) => void seen.push(c.length));
    expect(seen).toEqual([0]);
  });
});
