import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gunzipSync, gzipSync } from 'node:zlib';
import { gunzipBytes, gzipBytes, isSafeEntryName } from '../src/compress.js';
import { EngineError } from '../src/index.js';
import type { WorkflowEngine } from '../src/index.js';
import { runJson, scriptEngine, streamInput } from './engine-script.js';

const MiB = 1024 * 1024;
const text = new TextEncoder().encode('{"level":"info","msg":"request served","status":200}\n'.repeat(200));

/** A gzip stream of `members` concatenated members, each 1 MiB of zeros (about 1 KiB each): a bomb. */
function bomb(members: number): Buffer {
  const one = gzipSync(Buffer.alloc(MiB));
  return Buffer.concat(Array.from({ length: members }, () => one));
}

describe('gzipBytes', () => {
  it('compresses to a gzip stream node:zlib reads, the same bytes every time', () => {
    const a = gzipBytes(text, undefined);
    expect(gunzipSync(a)).toEqual(Buffer.from(text));
    expect(gzipBytes(text, undefined)).toEqual(a);
    expect(a.length).toBeLessThan(text.length / 10);
  });

  it('takes a level from -1 to 9 and refuses anything else with ENGINE_BAD_ARGUMENT', () => {
    expect(gunzipSync(gzipBytes(text, 0))).toEqual(Buffer.from(text));
    expect(gzipBytes(text, 9).length).toBeLessThanOrEqual(gzipBytes(text, 1).length);
    for (const level of [10, -2, 1.5, '6', NaN])
      expect(() => gzipBytes(text, level)).toThrowCode(EngineError, 'ENGINE_BAD_ARGUMENT');
  });
});

describe('gunzipBytes', () => {
  const gz = gzipSync(text);

  it('returns the bytes of every member of a multi-member stream', () => {
    expect(gunzipBytes(Buffer.concat([gz, gz]), MiB)).toEqual(
      Buffer.concat([Buffer.from(text), Buffer.from(text)]),
    );
  });

  it('returns an output of exactly the cap', () => {
    expect(gunzipBytes(gz, text.length).length).toBe(text.length);
    expect(() => gunzipBytes(gz, text.length - 1)).toThrowCode('EngineError', 'ENGINE_COMPRESSION_LIMIT');
  });

  it('S141 stops a gzip bomb at the output cap with ENGINE_COMPRESSION_LIMIT, holding about the cap in memory', () => {
    const b = bomb(256); // 256 MiB of output from about 260 KiB
    const before = process.memoryUsage().arrayBuffers;
    expect(() => gunzipBytes(b, MiB)).toThrowCode('EngineError', 'ENGINE_COMPRESSION_LIMIT');
    // Output chunks up to the cap and zlib's buffers, never the 256 MiB.
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(16 * MiB);
  });

  it('S141 refuses a truncated stream at every length with ENGINE_COMPRESSION_INVALID', () => {
    for (let n = 0; n < gz.length; n++)
      expect(() => gunzipBytes(gz.subarray(0, n), MiB)).toThrowCode(
        'EngineError',
        'ENGINE_COMPRESSION_INVALID',
      );
  });

  it('S141 refuses trailing garbage, zero padding and a partial second member with ENGINE_COMPRESSION_INVALID', () => {
    for (const tail of [Buffer.from('garbage'), Buffer.alloc(4), Buffer.from([0x1f]), gz.subarray(0, 12)]) {
      expect(() => gunzipBytes(Buffer.concat([gz, tail]), MiB)).toThrowCode(
        'EngineError',
        'ENGINE_COMPRESSION_INVALID',
      );
    }
  });

  it('refuses a wrong CRC-32, a wrong length and a damaged block with ENGINE_COMPRESSION_INVALID', () => {
    for (const at of [gz.length - 8, gz.length - 4, 12]) {
      const bad = Buffer.from(gz);
      bad[at]! ^= 0x40;
      expect(() => gunzipBytes(bad, MiB)).toThrowCode('EngineError', 'ENGINE_COMPRESSION_INVALID');
    }
  });
});

describe('isSafeEntryName', () => {
  it('accepts relative paths and refuses the zip-slip forms (S139)', () => {
    const ok = ['a.txt', 'dir/b.txt', 'a b/ü.json', '.hidden', 'a..b'];
    const bad = [
      '',
      '../x',
      '/abs',
      'C:\\x',
      'C:x',
      'a/../../x',
      'a\\..\\x',
      './x',
      'a/./b',
      'a//b',
      'a/',
      'x\u0000y',
      'x\ny',
    ];
    for (const n of ok) expect([n, isSafeEntryName(n, Buffer.byteLength(n), false)]).toEqual([n, true]);
    for (const n of bad) expect([n, isSafeEntryName(n, Buffer.byteLength(n), false)]).toEqual([n, false]);
    expect(isSafeEntryName('dir/', 4, true)).toBe(true);
    expect(isSafeEntryName('../', 3, true)).toBe(false);
    expect(isSafeEntryName('a'.repeat(1025), 1025, false)).toBe(false);
  });
});

describe('bytes().gzip / gunzip in a script', () => {
  let engine: WorkflowEngine;
  beforeAll(async () => {
    ({ engine } = await scriptEngine(
      {
        roundTrip: `const b = context.bytes();
          const s = b.createFromString(context.getBody());
          const g = b.gzip(s);
          context.setBody(JSON.stringify({ same: b.toString(b.gunzip(g)) === context.getBody(), magic: b.binaryToHex(g.subarray(0, 2)), nine: b.getSize(b.gzip(s, 9)) <= b.getSize(b.gzip(s, 1)) }));`,
        inflate: `const b = context.bytes();
          const g = context.getStream().readAll();
          const max = context.getProperty('max');
          const out = [];
          for (const f of [() => b.gunzip(g, max === null ? undefined : Number(max)).length, () => b.gunzip(g.subarray(0, g.length - 1)).length, () => b.gunzip(b.concat(g, b.createFromString('x'))).length]) {
            try { out.push(f()); } catch (e) { out.push(e.code || e.name); }
          }
          context.setBody(JSON.stringify(out));`,
        badArgs: `const b = context.bytes(); const out = [];
          for (const f of [() => b.gzip('x', 11), () => b.gunzip(b.gzip('x'), 0), () => b.gunzip(b.gzip('x'), 1.5)]) {
            try { f(); out.push('no error'); } catch (e) { out.push(e.code || e.name); }
          }
          context.setBody(JSON.stringify(out));`,
      },
      { limits: { memoryBytes: 8 * MiB } },
    ));
  });
  afterAll(() => engine.dispose());

  it('round-trips text through gzip and gunzip; the output is a gzip stream', async () => {
    expect(
      await runJson(engine, 'roundTrip', { ...streamInput(new Uint8Array(0)), body: 'hello '.repeat(500) }),
    ).toEqual({ same: true, magic: '1F8B', nine: true });
  });

  it('S141 gives the script a catchable ENGINE_COMPRESSION_LIMIT for a bomb, and the sandbox keeps serving', async () => {
    // 64 MiB against the run's 8 MiB memory limit: whole, cut short or with garbage, the cap comes first.
    const b = new Uint8Array(bomb(64));
    expect(await runJson(engine, 'inflate', streamInput(b))).toEqual(
      Array(3).fill('ENGINE_COMPRESSION_LIMIT'),
    );
    expect(await runJson(engine, 'inflate', streamInput(new Uint8Array(gzipSync(text))))).toEqual([
      text.length,
      'ENGINE_COMPRESSION_INVALID',
      'ENGINE_COMPRESSION_INVALID',
    ]);
  });

  it('lets a script lower the cap with maxBytes', async () => {
    const inp = streamInput(new Uint8Array(gzipSync(text)));
    inp.properties = { max: String(text.length - 1) };
    expect((await runJson(engine, 'inflate', inp)) as unknown[]).toContain('ENGINE_COMPRESSION_LIMIT');
  });

  it('refuses a bad level or maxBytes with ENGINE_BAD_ARGUMENT', async () => {
    expect(await runJson(engine, 'badArgs')).toEqual(Array(3).fill('ENGINE_BAD_ARGUMENT'));
  });
});
