import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { randomBytes } from 'node:crypto';
import { deflateRawSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { AgentError } from '../../src/errors.js';
import { openAssetArchive, SMALL_ENTRY_BYTES, type AssetArchive } from '../../src/assets/archive.js';
import { DEFAULT_ASSET_LIMITS } from '../../src/assets/zip-checks.js';
import { buildZip, type ZipEntrySpec } from '../zip-builder.js';

const dir = mkdtempSync(join(tmpdir(), 'assets-archive-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

async function openZip(zip: Buffer): Promise<AssetArchive> {
  const path = join(dir, `z${n++}.zip`);
  writeFileSync(path, zip);
  const handle = await open(path, 'r');
  return openAssetArchive(handle, zip.length, DEFAULT_ASSET_LIMITS, `zip "${path}"`);
}

const refused = (entries: ZipEntrySpec[]) => openZip(buildZip(entries));

async function bodyOf(archive: AssetArchive, name: string): Promise<Buffer> {
  const read = await archive.read(archive.get(name)!);
  if (Buffer.isBuffer(read)) return read;
  const chunks: Buffer[] = [];
  for await (const c of read) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

describe('openAssetArchive', () => {
  it('serves stored, deflated and descriptor entries; directories are not entries', async () => {
    const archive = await refused([
      { name: 'index.html', data: '<h1>hi</h1>' },
      { name: 'css/', method: 0 },
      { name: 'css/site.css', data: 'body{}', method: 0 },
      { name: 'app.js', data: 'let a = 1;'.repeat(50), descriptor: true },
    ]);
    expect(archive.get('css/')).toBeUndefined();
    expect((await bodyOf(archive, 'index.html')).toString()).toBe('<h1>hi</h1>');
    expect((await bodyOf(archive, 'css/site.css')).toString()).toBe('body{}');
    expect((await bodyOf(archive, 'app.js')).toString()).toBe('let a = 1;'.repeat(50));
    expect(archive.get('index.html')).toMatchObject({ contentType: 'text/html; charset=utf-8', size: 11 });
    expect(archive.get('css/site.css')!.etag).toMatch(/^"[0-9a-f]{8}-6"$/);
    await archive.close();
    expect(archive.closed).toBe(true);
  });

  it('streams an entry larger than one chunk instead of buffering it whole', async () => {
    const big = randomBytes(SMALL_ENTRY_BYTES * 4);
    const archive = await refused([{ name: 'big.bin', data: big }]);
    const read = await archive.read(archive.get('big.bin')!);
    expect(read).toBeInstanceOf(Readable);
    (read as Readable).destroy();
    expect((await bodyOf(archive, 'big.bin')).equals(big)).toBe(true);
    await archive.close();
  });

  it('close ends a stream still open with an error; reads after it fail', async () => {
    const archive = await refused([
      { name: 'big.bin', data: randomBytes(SMALL_ENTRY_BYTES * 4) },
      { name: 's', data: 's' },
    ]);
    const stream = (await archive.read(archive.get('big.bin')!)) as Readable;
    const failed = new Promise((resolve) => stream.once('error', resolve));
    await archive.close();
    expect(String(await failed)).toMatch(/the asset archive was closed/);
    await expect(archive.read(archive.get('s')!)).rejects.toThrow();
  });

  it('rejects a file that is not a zip with AGENT_ASSET_INVALID naming the file', async () => {
    const err = await openZip(Buffer.from('not a zip at all')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AgentError);
    expect(err).toMatchObject({ code: 'AGENT_ASSET_INVALID' });
    expect((err as Error).message).toMatch(/^zip ".*\.zip" is refused: /);
  });
});

describe('S139 zip slip', () => {
  it.each([
    '../x',
    'a/../../x',
    '/abs',
    'C:\\x',
    'C:x',
    'a\\..\\x',
    'a//b',
    './a',
    'a/./b',
    'bell\u0007',
    '',
  ])('S139 refuses the entry name %j with AGENT_ASSET_INVALID', async (name) => {
    await expect(
      refused([
        { name: 'ok.txt', data: 'ok' },
        { name, data: 'x' },
      ]),
    ).toThrowCode(AgentError, 'AGENT_ASSET_INVALID');
  });

  it('S139 refuses a zip-slip name hidden in the central directory only (local header differs)', async () => {
    await expect(refused([{ name: 'safe.txt', data: 'x', central: { name: '../safe.txt' } }])).toThrowCode(
      AgentError,
      'AGENT_ASSET_INVALID',
    );
  });
});

describe('S140 decompression bombs', () => {
  const MiB = 1024 * 1024;

  it('S140 refuses an entry over the ratio limit before inflating it', async () => {
    const err = await refused([{ name: 'zeros.bin', data: Buffer.alloc(2 * MiB) }]).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'AGENT_ASSET_INVALID' });
    expect((err as Error).message).toMatch(
      /entry "zeros\.bin": the entry expands \d+ times, over the limit of 100$/,
    );
  });

  it('S140 accepts a compressible entry under the ratio floor', async () => {
    const archive = await refused([
      { name: 'small-zeros.bin', data: Buffer.alloc(DEFAULT_ASSET_LIMITS.ratioFloorBytes) },
    ]);
    expect((await bodyOf(archive, 'small-zeros.bin')).length).toBe(DEFAULT_ASSET_LIMITS.ratioFloorBytes);
    await archive.close();
  });

  it('S140 refuses an entry declared over the size limit', async () => {
    const usize = DEFAULT_ASSET_LIMITS.maxEntryBytes + 1;
    const err = await refused([
      {
        name: 'huge.bin',
        data: 'x',
        method: 0,
        central: { usize, csize: usize },
        local: { usize, csize: usize },
      },
    ]).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'AGENT_ASSET_INVALID' });
    expect((err as Error).message).toMatch(/over the limit of 268435456$/);
  });

  it('S140 refuses entries whose sizes add up over the total limit', async () => {
    const usize = 200 * MiB;
    const entries = [1, 2, 3, 4, 5, 6].map((i) => ({
      name: `part${i}.bin`,
      data: 'x',
      method: 0 as const,
      central: { usize, csize: usize },
    }));
    const err = await refused(entries).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'AGENT_ASSET_INVALID' });
    expect((err as Error).message).toMatch(
      /the entries hold \d+ bytes uncompressed, over the limit of 1073741824$/,
    );
  });

  it('S140 refuses entries that share bytes (overlapping-entry bomb)', async () => {
    const data = 'abc'.repeat(100);
    const csize = deflateRawSync(Buffer.from(data)).length + 40;
    const err = await refused([
      { name: 'a.txt', data, local: { csize }, central: { csize } },
      { name: 'b.txt', data: 'b' },
    ]).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'AGENT_ASSET_INVALID' });
    expect((err as Error).message).toMatch(/entries "a\.txt" and "b\.txt" overlap$/);
  });

  it('S140 refuses an entry whose real data inflates past its declared size', async () => {
    const data = Buffer.alloc(4096, 7);
    await expect(
      refused([{ name: 'liar.bin', data, central: { usize: 100 }, local: { usize: 100 } }]),
    ).toThrowCode(AgentError, 'AGENT_ASSET_INVALID');
  });

  it('S140 serves a nested zip as its bytes, never expanding it', async () => {
    const inner = buildZip([{ name: 'zeros.bin', data: Buffer.alloc(8 * MiB) }]);
    const archive = await refused([{ name: 'inner.zip', data: inner, method: 0 }]);
    expect(archive.get('inner.zip')!.contentType).toBe('application/zip');
    expect((await bodyOf(archive, 'inner.zip')).equals(inner)).toBe(true);
    await archive.close();
  });

  it('S140 refuses more entries than the limit', async () => {
    const entries = Array.from({ length: DEFAULT_ASSET_LIMITS.maxEntries + 1 }, (_, i) => ({
      name: `f${i}`,
      method: 0 as const,
    }));
    await expect(refused(entries)).toThrowCode(AgentError, 'AGENT_ASSET_INVALID');
  });
});

describe('S142 central directory and local headers', () => {
  const cases: [string, ZipEntrySpec[]][] = [
    ['another name in the local header', [{ name: 'a.txt', data: 'a', local: { name: 'b.txt' } }]],
    ['another method in the local header', [{ name: 'a.txt', data: 'a', method: 0, local: { method: 8 } }]],
    ['another CRC in the local header', [{ name: 'a.txt', data: 'a', local: { crc: 1 } }]],
    ['another size in the local header', [{ name: 'a.txt', data: 'aaa', local: { usize: 2 } }]],
    [
      'another CRC in the central directory',
      [{ name: 'a.txt', data: 'a', central: { crc: 1 }, local: { crc: 1 } }],
    ],
    [
      'a data descriptor that disagrees',
      [{ name: 'a.txt', data: 'a', descriptor: true, descriptorValues: { crc: 5 } }],
    ],
    [
      'an encrypted entry',
      [{ name: 'a.txt', data: 'a', central: { flags: 0x0801 }, local: { flags: 0x0801 } }],
    ],
    [
      'a local header offset into the data',
      [
        { name: 'a.txt', data: 'a' },
        { name: 'b.txt', data: 'b', central: { offset: 3 } },
      ],
    ],
    [
      'an offset to another entry',
      [
        { name: 'a.txt', data: 'a' },
        { name: 'b.txt', data: 'b', central: { offset: 0 } },
      ],
    ],
    [
      'data running into the central directory',
      [{ name: 'a.txt', data: 'abc', local: { csize: 60 }, central: { csize: 60 } }],
    ],
    [
      'duplicate names',
      [
        { name: 'a.txt', data: 'one' },
        { name: 'a.txt', data: 'two' },
      ],
    ],
  ];

  it.each(cases)('S142 refuses %s with AGENT_ASSET_INVALID, identically every time', async (_, entries) => {
    const zip = buildZip(entries);
    const messages: string[] = [];
    for (let i = 0; i < 3; i++) {
      const err = await openZip(zip).catch((e: unknown) => e);
      expect(err).toMatchObject({ name: 'AgentError', code: 'AGENT_ASSET_INVALID' });
      messages.push((err as Error).message.replace(/"[^"]*\.zip"/, 'ZIP'));
    }
    expect(new Set(messages).size).toBe(1);
  });

  it('S142 says which rule refused the zip', async () => {
    const reason = (entries: ZipEntrySpec[]) =>
      refused(entries).then(
        () => 'opened',
        (e: Error) => e.message.replace(/^zip "[^"]*" is refused: /, ''),
      );
    expect(
      await reason([
        { name: 'a.txt', data: 'a' },
        { name: 'b.txt', data: 'b', central: { offset: 0 } },
      ]),
    ).toBe('entry "b.txt": the local header names another file');
    expect(await reason([{ name: 'a.txt', data: 'abc', local: { csize: 60 }, central: { csize: 60 } }])).toBe(
      'entry "a.txt" runs into the central directory',
    );
    expect(
      await reason([{ name: 'a.txt', data: 'a', descriptor: true, descriptorValues: { usize: 9 } }]),
    ).toBe('entry "a.txt": the data descriptor disagrees with the central directory');
    expect(await reason([{ name: 'a.txt', data: 'aaa', local: { usize: 2 } }])).toBe(
      'entry "a.txt": the local header has another size',
    );
    expect(await reason([{ name: 'a.txt', data: 'a', central: { crc: 1 }, local: { crc: 1 } }])).toBe(
      'entry "a.txt": the data does not match its CRC-32',
    );
  });

  it('S142 names the duplicate entry', async () => {
    const err = await refused([
      { name: 'a.txt', data: 'one' },
      { name: 'a.txt', data: 'two' },
    ]).catch((e: unknown) => e);
    expect((err as Error).message).toMatch(/entry "a\.txt": the name appears twice$/);
  });
});
