import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deflateRawSync } from 'node:zlib';
import { unzipArchive } from '../src/zip-read.js';
import { zipArchive } from '../src/zip-write.js';
import type { WorkflowEngine } from '../src/index.js';
import { runJson, scriptEngine, streamInput } from './engine-script.js';
import { rogueZip, type RogueEntry } from './zip-rogue.js';

const MiB = 1024 * 1024;
const enc = new TextEncoder();
const fixture = (name: string): Uint8Array =>
  new Uint8Array(readFileSync(new URL(`../testdata/zip/${name}`, import.meta.url)));
const text = (s: string): Uint8Array => enc.encode(s);
const named = (entries: { name: string; bytes: Uint8Array }[]): [string, string][] =>
  entries.map((e) => [e.name, Buffer.from(e.bytes).toString()]);

const hasUnzipTool = ((): boolean => {
  try {
    execFileSync('unzip', ['-v'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

describe('zipArchive', () => {
  const entries = [
    { name: 'a.txt', bytes: text('hello '.repeat(100)) },
    { name: 'dir/b.bin', bytes: new Uint8Array([1, 2, 3]) },
    { name: 'ü/empty', bytes: new Uint8Array(0) },
  ];

  it('writes an archive its reader returns entry for entry, the same bytes every time', () => {
    const z = zipArchive(entries);
    const asBuffers = (l: { name: string; bytes: Uint8Array }[]) =>
      l.map((e) => [e.name, Buffer.from(e.bytes)]);
    expect(asBuffers(unzipArchive(z, MiB))).toEqual(asBuffers(entries));
    expect(zipArchive(entries)).toEqual(z);
    expect(z.length).toBeLessThan(350); // the 600 bytes of repeated text were deflated
  });

  it.skipIf(!hasUnzipTool)('writes an archive Info-ZIP unzip tests and extracts', () => {
    const dir = mkdtempSync(join(tmpdir(), 'zip-write-'));
    try {
      writeFileSync(join(dir, 'x.zip'), zipArchive(entries));
      execFileSync('unzip', ['-tq', 'x.zip'], { cwd: dir });
      execFileSync('unzip', ['-q', 'x.zip', '-d', 'out'], { cwd: dir });
      expect(readFileSync(join(dir, 'out/dir/b.bin'))).toEqual(Buffer.from([1, 2, 3]));
      expect(readFileSync(join(dir, 'out/a.txt'), 'utf8')).toBe('hello '.repeat(100));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('S139 refuses to write an unsafe or repeated name with ENGINE_COMPRESSION_INVALID', () => {
    for (const name of ['../x', '/abs', 'C:\\x', 'a/../../x', 'dir/', '', 'x\ud800'])
      expect(() => zipArchive([{ name, bytes: text('x') }])).toThrowCode(
        'EngineError',
        'ENGINE_COMPRESSION_INVALID',
      );
    expect(() =>
      zipArchive([
        { name: 'a', bytes: text('1') },
        { name: 'a', bytes: text('2') },
      ]),
    ).toThrowCode('EngineError', 'ENGINE_COMPRESSION_INVALID');
  });

  it('refuses more than 10 000 entries with ENGINE_COMPRESSION_LIMIT', () => {
    const many = Array.from({ length: 10_001 }, (_, i) => ({ name: `f${i}`, bytes: new Uint8Array(0) }));
    expect(() => zipArchive(many)).toThrowCode('EngineError', 'ENGINE_COMPRESSION_LIMIT');
  });
});

describe('unzipArchive', () => {
  it('reads an Info-ZIP archive, leaving the directory entry out', () => {
    expect(named(unzipArchive(fixture('infozip.zip'), MiB))).toEqual([
      ['a.txt', 'hello hello hello hello\n'],
      ['sub/b.txt', 'second file\n'],
    ]);
  });

  it('reads a streamed archive with data descriptors (local CRC-32 and sizes 0)', () => {
    expect(named(unzipArchive(fixture('python-stream.zip'), MiB))).toEqual([
      ['data/x.json', '{"a": 1, "b": [1,2,3]}'.repeat(20)],
      ['empty.txt', ''],
    ]);
  });

  it('reads an archive with a comment and with no entries', () => {
    const z = rogueZip([{ name: 'a', data: text('1') }], { comment: text('a comment') });
    expect(named(unzipArchive(z, MiB))).toEqual([['a', '1']]);
    expect(unzipArchive(rogueZip([]), MiB)).toEqual([]);
  });

  it('S139 refuses zip-slip names, whatever else the archive holds', () => {
    for (const name of [
      '../x',
      '/abs',
      'C:\\x',
      'C:/x',
      'a/../../x',
      '..\\x',
      './x',
      'a//b',
      '',
      'a\u0000b',
    ]) {
      const z = rogueZip([
        { name: 'fine.txt', data: text('ok') },
        { name, data: text('evil') },
      ]);
      expect(() => unzipArchive(z, MiB)).toThrowCode('EngineError', 'ENGINE_COMPRESSION_INVALID');
    }
    const notUtf8 = rogueZip([{ name: new Uint8Array([0x61, 0xff]), data: text('x') }]);
    expect(() => unzipArchive(notUtf8, MiB)).toThrowCode('EngineError', 'ENGINE_COMPRESSION_INVALID');
  });

  it('S140 refuses entries declaring more than the cap in all before inflating anything', () => {
    const z = rogueZip([
      { name: 'a', data: new Uint8Array(MiB), method: 8 },
      { name: 'b', data: new Uint8Array(MiB), method: 8 },
    ]);
    expect(unzipArchive(z, 2 * MiB).length).toBe(2);
    expect(() => unzipArchive(z, 2 * MiB - 1)).toThrowCode('EngineError', 'ENGINE_COMPRESSION_LIMIT');
  });

  // 1.3 s in a CI run on 2 shared cores (real servers, child processes or sandbox workers): an explicit timeout.
  it(
    'S140 stops an entry that inflates past its declared size at that size, holding about that much',
    { timeout: 10_000 },
    () => {
      const big = new Uint8Array(256 * MiB); // 256 MiB of zeros deflate to about 256 KiB
      const z = rogueZip([{ name: 'a', data: big, method: 8, usize: 10 }]);
      const before = process.memoryUsage().arrayBuffers;
      expect(() => unzipArchive(z, MiB)).toThrowCode('EngineError', 'ENGINE_COMPRESSION_INVALID');
      expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(16 * MiB);
    },
  );

  it('S140 returns a nested archive as bytes, never expanding it', () => {
    const inner = zipArchive([{ name: 'in.txt', bytes: new Uint8Array(MiB) }]);
    const outer = zipArchive([{ name: 'inner.zip', bytes: inner }]);
    expect(unzipArchive(outer, inner.length)).toEqual([{ name: 'inner.zip', bytes: Buffer.from(inner) }]);
  });

  const defects: [string, Buffer][] = [
    [
      'a repeated name',
      rogueZip([
        { name: 'a', data: text('1') },
        { name: 'a', data: text('2') },
      ]),
    ],
    [
      'a local name unlike the central one',
      rogueZip([{ name: 'a.txt', localName: '../a', data: text('1') }]),
    ],
    ['a local method unlike the central one', rogueZip([{ name: 'a', data: text('1'), localMethod: 8 }])],
    ['local flags unlike the central ones', rogueZip([{ name: 'a', data: text('1'), localFlags: 0 }])],
    [
      'a local size unlike the central one',
      rogueZip([{ name: 'a', data: text('12'), localUsize: 1, localCsize: 1 }]),
    ],
    ['a local CRC-32 unlike the central one', rogueZip([{ name: 'a', data: text('1'), localCrc: 7 }])],
    [
      'zero local sizes without the data-descriptor flag',
      rogueZip([{ name: 'a', data: text('1'), localCrc: 0, localCsize: 0, localUsize: 0 }]),
    ],
    ['a wrong CRC-32 in both headers', rogueZip([{ name: 'a', data: text('1'), crc: 7 }])],
    ['a stored entry with two sizes', rogueZip([{ name: 'a', data: text('12'), usize: 3, localUsize: 3 }])],
    [
      'a deflated entry shorter than declared',
      rogueZip([{ name: 'a', data: text('12'), method: 8, usize: 3, localUsize: 3 }]),
    ],
    ['an offset past the data', rogueZip([{ name: 'a', data: text('1'), offset: 5 }])],
    ['an unsupported method (bzip2)', rogueZip([{ name: 'a', data: text('1'), method: 12 }])],
    ['an encrypted entry', rogueZip([{ name: 'a', data: text('1'), flags: 0x0801 }])],
    ['a directory entry with content', rogueZip([{ name: 'dir/', data: text('1') }])],
    ['an entry count larger than the directory', rogueZip([{ name: 'a', data: text('1') }], { count: 2 })],
    [
      'an entry count smaller than the directory',
      rogueZip(
        [
          { name: 'a', data: text('1') },
          { name: 'b', data: text('2') },
        ],
        { count: 1 },
      ),
    ],
    [
      'a directory size that misses the end record',
      rogueZip([{ name: 'a', data: text('1') }], { cdSize: 40 }),
    ],
    ['data before the archive', rogueZip([{ name: 'a', data: text('1') }], { prefix: text('MZ stub') })],
    ['trailing data after the end record', rogueZip([{ name: 'a', data: text('1') }], { suffix: text('x') })],
    ['a comment length past the end', rogueZip([{ name: 'a', data: text('1') }], { commentLength: 5 })],
    ['a second disk', rogueZip([{ name: 'a', data: text('1') }], { disk: 1 })],
    ['ZIP64 markers', rogueZip([{ name: 'a', data: text('1'), csize: 0xffffffff }])],
    ['no end record', Buffer.from('PK not a zip at all, not even close')],
  ];

  it.each(defects)('S142 refuses %s with ENGINE_COMPRESSION_INVALID, the same way every time', (_what, z) => {
    const messages = [0, 1].map(() => {
      try {
        unzipArchive(z, MiB);
        return 'accepted';
      } catch (e) {
        expect(e).toMatchObject({ name: 'EngineError', code: 'ENGINE_COMPRESSION_INVALID' });
        return (e as Error).message;
      }
    });
    expect(messages[1]).toBe(messages[0]);
  });

  it('S142 refuses overlapping entries (one stored stream claimed twice)', () => {
    // Entry a's declared data runs over entry b's local header: an overlapping-entry bomb reuses bytes this way.
    const b: RogueEntry = { name: 'b', data: text('B') };
    const z = rogueZip([{ name: 'a', data: text('A') }, b]);
    const grown = rogueZip([
      { name: 'a', data: text('A'), csize: 33, usize: 33, localCsize: 33, localUsize: 33 },
      b,
    ]);
    expect(unzipArchive(z, MiB).length).toBe(2);
    expect(() => unzipArchive(grown, MiB)).toThrowCode('EngineError', 'ENGINE_COMPRESSION_INVALID');
  });

  it('refuses data after an entry’s deflate stream', () => {
    const data = text('hello');
    const payload = Buffer.concat([deflateRawSync(data), Buffer.from('junk')]);
    expect(unzipArchive(rogueZip([{ name: 'a', data, method: 8 }]), MiB).length).toBe(1);
    expect(() => unzipArchive(rogueZip([{ name: 'a', data, method: 8, payload }]), MiB)).toThrowCode(
      'EngineError',
      'ENGINE_COMPRESSION_INVALID',
    );
  });
});

describe('bytes().zip / unzip in a script', () => {
  let engine: WorkflowEngine;
  beforeAll(async () => {
    ({ engine } = await scriptEngine(
      {
        roundTrip: `const b = context.bytes();
          const fromObject = b.zip({ 'a.txt': 'one', 'dir/b.bin': b.createFromByteArray([1, 2, 3]) });
          const fromArray = b.zip([{ name: 'a.txt', bytes: 'one' }, { name: 'dir/b.bin', bytes: [1, 2, 3] }]);
          const back = b.unzip(fromObject);
          context.setBody(JSON.stringify({
            same: b.binaryToHex(fromObject) === b.binaryToHex(fromArray),
            entries: back.map((e) => [e.name, b.binaryToHex(e.bytes), e.bytes instanceof Uint8Array]),
            again: b.binaryToHex(b.zip(back)) === b.binaryToHex(fromObject),
          }));`,
        read: `const b = context.bytes(); const out = [];
          try { out.push(b.unzip(context.getStream().readAll()).map((e) => e.name)); } catch (e) { out.push(e.code); }
          context.setBody(JSON.stringify(out));`,
        refuse: `const b = context.bytes(); const out = [];
          for (const f of [() => b.zip({ '../evil': 'x' }), () => b.zip([{ name: 'a', bytes: '1' }, { name: 'a', bytes: '2' }]), () => b.zip('nope'), () => b.zip([null])]) {
            try { f(); out.push('no error'); } catch (e) { out.push(e.code || e.name); }
          }
          context.setBody(JSON.stringify(out));`,
      },
      { limits: { memoryBytes: 8 * MiB } },
    ));
  });
  afterAll(() => engine.dispose());

  it('zips an object or an array of { name, bytes } and unzips to the same entries', async () => {
    expect(await runJson(engine, 'roundTrip')).toEqual({
      same: true,
      entries: [
        ['a.txt', '6F6E65', true],
        ['dir/b.bin', '010203', true],
      ],
      again: true,
    });
  });

  it('reads archives of other tools', async () => {
    expect(await runJson(engine, 'read', streamInput(fixture('infozip.zip')))).toEqual([
      ['a.txt', 'sub/b.txt'],
    ]);
  });

  it('S139 refuses a zip-slip archive and writing a zip-slip name with ENGINE_COMPRESSION_INVALID', async () => {
    const evil = new Uint8Array(rogueZip([{ name: '../../etc/passwd', data: text('x') }]));
    expect(await runJson(engine, 'read', streamInput(evil))).toEqual(['ENGINE_COMPRESSION_INVALID']);
    expect(await runJson(engine, 'refuse')).toEqual([
      'ENGINE_COMPRESSION_INVALID',
      'ENGINE_COMPRESSION_INVALID',
      'ENGINE_BAD_ARGUMENT',
      'ENGINE_BAD_ARGUMENT',
    ]);
  });

  it('S140 refuses an archive declaring more than the run’s memory limit with ENGINE_COMPRESSION_LIMIT', async () => {
    const z = new Uint8Array(rogueZip([{ name: 'a', data: new Uint8Array(9 * MiB), method: 8 }]));
    expect(await runJson(engine, 'read', streamInput(z))).toEqual(['ENGINE_COMPRESSION_LIMIT']);
  });
});
