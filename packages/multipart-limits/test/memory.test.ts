import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bodyPart, buildForm, multipartHead, rawExchange, startServer } from './helpers.js';
import type { TestServer } from './helpers.js';

const MiB = 1024 * 1024;
const SLOW = process.env['SLOW'] !== undefined;
const BIG = (SLOW ? 2048 : 512) * MiB;
const BLOCK = 64 * 1024;

// 256 distinct 64 KiB blocks, allocated before any baseline and cycled, so the client allocates nothing per chunk.
const BLOCKS = Array.from({ length: 256 }, (_, n) => {
  const b = Buffer.alloc(BLOCK);
  for (let i = 0; i < BLOCK; i += 4) b.writeUInt32LE((Math.imul(i + 1, 2654435761) ^ n) >>> 0, i);
  return b;
});

function* blocks(total: number): Generator<Buffer> {
  for (let i = 0; i * BLOCK < total; i++) yield BLOCKS[i % 256]!;
}

function digest(total: number): string {
  const h = createHash('sha256');
  for (const b of blocks(total)) h.update(b);
  return h.digest('hex');
}

/** Samples resident memory every 20 ms while `work` runs; returns the peak growth over the starting value. */
async function peakRssGrowth<T>(work: () => Promise<T>): Promise<{ result: T; growth: number }> {
  (globalThis as { gc?: () => void }).gc?.();
  const base = process.memoryUsage().rss;
  let peak = base;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
  try {
    const result = await work();
    peak = Math.max(peak, process.memoryUsage().rss);
    return { result, growth: peak - base };
  } finally {
    clearInterval(timer);
  }
}

function upload(port: number, total: number): ReturnType<typeof rawExchange> {
  const prefix = buildForm(
    [bodyPart('{}'), { name: 'stream', filename: 's', type: 'application/octet-stream', content: '' }],
    {
      close: false,
    },
  ).subarray(0, -2);
  const suffix = Buffer.from(`\r\n--${'testBoundary7MA4YWxkTrZu0gW'}--\r\n`);
  return rawExchange(port, multipartHead(prefix.length + total + suffix.length), [
    prefix,
    ...blocks(total),
    suffix,
  ]);
}

let srv: TestServer;
beforeAll(async () => {
  srv = await startServer({ multipartByteLimit: BIG });
});
afterAll(() => srv.close());

describe('readUpload: memory', () => {
  it(`S13/S26: streams a ${BIG / MiB} MiB stream part with backpressure; resident memory grows far less than the upload`, async () => {
    const started = performance.now();
    const { result, growth } = await peakRssGrowth(() => upload(srv.port, BIG));
    const seconds = (performance.now() - started) / 1000;
    expect(result?.status).toBe(200);
    expect(JSON.parse(result!.body)).toMatchObject({ bytes: BIG, sha: digest(BIG) });
    console.info(
      `memory: ${BIG / MiB} MiB in ${seconds.toFixed(2)} s (${(BIG / MiB / seconds).toFixed(0)} MiB/s), peak rss growth ${(growth / MiB).toFixed(1)} MiB`,
    );
    expect(growth).toBeLessThan(96 * MiB);
  }, 60_000);

  it('S26: 100 parallel uploads of L bytes keep resident memory bounded, not proportional to L', async () => {
    const L = (SLOW ? 16 : 4) * MiB;
    const local = await startServer({ multipartByteLimit: L });
    try {
      const { result, growth } = await peakRssGrowth(() =>
        Promise.all(Array.from({ length: 100 }, () => upload(local.port, L))),
      );
      expect(result.every((a) => a?.status === 200)).toBe(true);
      expect(new Set(result.map((a) => (JSON.parse(a!.body) as { sha: string }).sha))).toEqual(
        new Set([digest(L)]),
      );
      console.info(
        `memory: 100 x ${L / MiB} MiB in parallel, peak rss growth ${(growth / MiB).toFixed(1)} MiB`,
      );
      // 100 uploads x about 256 KiB of stream buffers x a factor of 4; whole-L buffering would be 100 x L.
      expect(growth).toBeLessThan(100 * 256 * 1024 * 4);
    } finally {
      await local.close();
    }
  }, 60_000);
});
