import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ByteStream, MAX_READ_AHEAD_BYTES } from '../src/byte-stream.js';
import { EngineError, createWorkflowEngine } from '../src/index.js';
const MiB = 1024 * 1024;
import { fakeHost, input, scriptStep, workflow } from './fake-host.js';

const KiB = 1024;

/** A source of `count` chunks of `size` bytes (byte i of the whole stream is i % 251); counts what was pulled. */
function source(count: number, size: number, failAfter = Infinity) {
  const pulled = { chunks: 0 };
  async function* gen(): AsyncGenerator<Uint8Array> {
    for (let c = 0; c < count; c++) {
      await Promise.resolve(); // chunks arrive asynchronously, as from a socket
      if (c >= failAfter) throw new Error('upload broke');
      pulled.chunks++;
      const chunk = new Uint8Array(size);
      for (let i = 0; i < size; i++) chunk[i] = (c * size + i) % 251;
      yield chunk;
    }
  }
  return { stream: gen(), pulled };
}

function bytesOf(r: { chunks: readonly Uint8Array[]; byteLength: number }): Uint8Array {
  const out = new Uint8Array(r.byteLength);
  let off = 0;
  for (const c of r.chunks) {
    out.set(c, off);
    off += c.byteLength;
  }
  return out;
}

const settle = () => new Promise((r) => setTimeout(r, 20));

async function* asAsyncOf(chunks: Uint8Array[]): AsyncGenerator<Uint8Array> {
  for (const c of chunks) {
    await Promise.resolve();
    yield c;
  }
}

describe('ByteStream', () => {
  it('pulls nothing before the first read', async () => {
    const { stream, pulled } = source(4, KiB);
    new ByteStream(stream);
    await settle();
    expect(pulled.chunks).toBe(0);
  });

  it('reads ahead at most what the last read asked for, and returns the bytes in order', async () => {
    const { stream, pulled } = source(64, KiB);
    const s = new ByteStream(stream);
    const first = await s.read(2 * KiB, Infinity);
    expect(Array.from(bytesOf(first).subarray(0, 4))).toEqual([0, 1, 2, 3]);
    await settle();
    expect(pulled.chunks).toBe(4); // 2 read + 2 ahead, not the whole stream
    const second = await s.read(2 * KiB, Infinity);
    expect(bytesOf(second)[0]).toBe((2 * KiB) % 251);
  });

  it('does not read ahead past the end or after a short read', async () => {
    const { stream, pulled } = source(3, KiB);
    const s = new ByteStream(stream);
    expect((await s.read(10 * KiB, Infinity)).byteLength).toBe(3 * KiB);
    await settle();
    expect(pulled.chunks).toBe(3);
    expect((await s.read(KiB, Infinity)).byteLength).toBe(0);
  });

  it('caps read-ahead at MAX_READ_AHEAD_BYTES', async () => {
    const size = 64 * KiB;
    const { stream, pulled } = source(128, size);
    const s = new ByteStream(stream);
    await s.read(4 * MAX_READ_AHEAD_BYTES, Infinity);
    await settle();
    expect(pulled.chunks * size).toBe(4 * MAX_READ_AHEAD_BYTES + MAX_READ_AHEAD_BYTES);
  });

  it('keeps a failure met while reading ahead and throws it whenever more bytes are needed', async () => {
    const { stream } = source(8, KiB, 3);
    const s = new ByteStream(stream);
    expect((await s.read(2 * KiB, Infinity)).byteLength).toBe(2 * KiB);
    await settle(); // the read-ahead meets the failure; nobody waits for it (no unhandled rejection)
    await expect(s.read(2 * KiB, Infinity)).rejects.toThrow('upload broke');
    await expect(s.read(2 * KiB, Infinity)).rejects.toThrow('upload broke');
    expect(await s.available()).toBe(KiB); // what arrived before the failure is still there
    expect((await s.read(KiB, Infinity)).byteLength).toBe(KiB);
    await expect(s.available()).rejects.toThrow('upload broke');
  });

  it('refuses readAll beyond maxBytes with ENGINE_MEMORY', async () => {
    const { stream } = source(4, KiB);
    await expect(new ByteStream(stream).read(-1, 3 * KiB)).toThrowCode(EngineError, 'ENGINE_MEMORY');
  });

  it('refuses read(n) beyond maxBytes with ENGINE_MEMORY, buffering no more than maxBytes and a chunk', async () => {
    const { stream, pulled } = source(100, KiB);
    const s = new ByteStream(stream);
    await expect(s.read(5 * KiB, 3 * KiB)).toThrowCode(EngineError, 'ENGINE_MEMORY');
    await expect(s.read(-1, 3 * KiB)).toThrowCode(EngineError, 'ENGINE_MEMORY');
    expect(pulled.chunks).toBe(4);
    // The failed reads consumed nothing: the stream still starts at its first byte.
    expect(bytesOf(await s.read(2, 3 * KiB))).toEqual(new Uint8Array([0, 1]));
  });

  it('returns a stream shorter than n when n is beyond maxBytes', async () => {
    const { stream } = source(4, KiB);
    expect((await new ByteStream(stream).read(64 * KiB, 8 * KiB)).byteLength).toBe(4 * KiB);
  });
});

describe('ByteStream of a transferable source', () => {
  it('hands over whole chunks as owned, copying the part of a chunk a read splits', async () => {
    const { stream } = source(4, 4 * KiB);
    const s = new ByteStream(stream, { transferable: true });
    const first = await s.read(6 * KiB, Infinity);
    expect(first.owned).toBe(true);
    expect(first.chunks.map((c) => c.byteLength)).toEqual([4 * KiB, 2 * KiB]);
    // the split chunk's first part is a copy: its buffer is not the one still queued
    expect(first.chunks[1]!.buffer.byteLength).toBe(2 * KiB);
    expect(first.buffers()).toHaveLength(2);
    const second = await s.read(10 * KiB, Infinity);
    expect(second.owned).toBe(true);
    expect(second.chunks[0]!.byteLength).toBe(2 * KiB); // the rest of the split chunk, a view of its own buffer
    const all = new Uint8Array(16 * KiB);
    all.set(bytesOf(first), 0);
    all.set(bytesOf(second), 6 * KiB);
    expect(all.every((b, i) => b === i % 251)).toBe(true);
  });

  it('hands over nothing as owned when a queued chunk shares a buffer with the read (a broken promise)', async () => {
    const shared = new Uint8Array(8 * KiB).map((_, i) => i % 251);
    const s = new ByteStream(asAsyncOf([shared.subarray(0, 4 * KiB), shared.subarray(4 * KiB)]), {
      transferable: true,
    });
    // The read takes the first chunk whole and splits the second, whose rest (same buffer) stays queued.
    const r = await s.read(6 * KiB, Infinity);
    expect(r.owned).toBe(false);
    expect(bytesOf(r)).toEqual(shared.subarray(0, 6 * KiB));
    expect(bytesOf(await s.read(2 * KiB, Infinity))).toEqual(shared.subarray(6 * KiB));
  });

  it('hands over nothing as owned without the promise', async () => {
    const { stream } = source(2, 4 * KiB);
    const r = await new ByteStream(stream).read(8 * KiB, Infinity);
    expect(r.owned).toBe(false);
    expect(r.buffers()).toBeUndefined();
  });
});

describe('ByteStream over a Node Readable (flowing, paused at the read-ahead mark)', () => {
  function readable(count: number, size: number): { r: Readable; produced: () => number } {
    let made = 0;
    const r = new Readable({
      read() {
        if (made === count) return void this.push(null);
        const chunk = new Uint8Array(size);
        for (let i = 0; i < size; i++) chunk[i] = (made * size + i) % 251;
        made++;
        this.push(chunk);
      },
    });
    return { r, produced: () => made };
  }

  it('takes chunks one by one, in order, and stops near the mark', async () => {
    const { r, produced } = readable(64, KiB);
    const s = new ByteStream(r);
    const first = await s.read(2 * KiB, Infinity);
    expect(first.chunks.length).toBe(2); // views of the chunks, never one joined copy
    expect(bytesOf(first)[KiB]).toBe(KiB % 251);
    await settle();
    // 2 read + 2 ahead, plus what the readable buffers itself (its highWaterMark, 16 KiB): not all 64.
    expect(produced()).toBeLessThanOrEqual(4 + 16);
    const rest = await s.read(-1, Infinity);
    expect(rest.byteLength).toBe(62 * KiB);
    expect(bytesOf(rest)[0]).toBe((2 * KiB) % 251);
    expect((await s.read(KiB, Infinity)).byteLength).toBe(0);
  });

  it('throws the error of a readable that failed before the first read', async () => {
    const { r } = readable(4, KiB);
    r.on('error', () => undefined); // as the app does: it watches the stream it hands to the step
    r.destroy(new Error('upload broke early'));
    await settle();
    await expect(new ByteStream(r).read(KiB, Infinity)).rejects.toThrow('upload broke early');
  });

  it('refuses to call a readable closed before its end complete', async () => {
    const { r } = readable(4, KiB);
    r.destroy();
    await settle();
    await expect(new ByteStream(r).read(KiB, Infinity)).rejects.toThrow('closed before its end');
  });

  it('reads a readable that ended before the first read as empty', async () => {
    const r = Readable.from([], { objectMode: false });
    r.resume();
    await settle();
    expect((await new ByteStream(r).read(KiB, Infinity)).byteLength).toBe(0);
  });

  it('throws an error met while reading ahead when more bytes are needed', async () => {
    let made = 0;
    const r = new Readable({
      read() {
        if (made++ < 3) this.push(new Uint8Array(KiB));
        else this.destroy(new Error('upload broke'));
      },
    });
    const s = new ByteStream(r);
    expect((await s.read(2 * KiB, Infinity)).byteLength).toBe(2 * KiB);
    await settle();
    await expect(s.read(4 * KiB, Infinity)).rejects.toThrow('upload broke');
  });
});

describe('stream bytes into the sandbox', () => {
  // A checksum computed in the script over everything it read: proves every byte arrived, in order, whether the
  // read got a new buffer or one the worker gave back from an earlier read of the same size.
  const checksum = (reads: string) => `
    const r = context.getStream(); let sum = 0, n = 0;
    const add = (c) => { for (let i = 0; i < c.length; i++) sum = (sum * 31 + c[i]) >>> 0; n += c.length; };
    ${reads}
    context.setBody(n + ':' + sum);`;
  function expected(total: number): string {
    let sum = 0;
    for (let i = 0; i < total; i++) sum = (sum * 31 + (i % 251)) >>> 0;
    return `${total}:${sum}`;
  }

  /** A step that reads 1 MiB, 1 MiB, 1000 bytes, 1 MiB, then the rest, and answers the checksum of all it read. */
  const mixedReads = () =>
    createWorkflowEngine(
      workflow([
        scriptStep(
          'mixed',
          checksum(
            `add(r.read(${MiB})); add(r.read(${MiB})); add(r.read(1000)); add(r.read(${MiB})); add(r.readAll());`,
          ),
        ),
      ]),
      { host: fakeHost(), data: {}, limits: { memoryBytes: 64 * 1024 * KiB } },
    );

  // 1.7 s in a CI run on 2 shared cores (real servers, child processes or sandbox workers): an explicit timeout.
  it(
    'delivers every byte in new and reused buffers and at the end of the stream',
    { timeout: 10_000 },
    async () => {
      const size = 64 * KiB;
      const chunks = 3 * (MiB / size) + 3; // 3 MiB + 192 KiB
      const engine = await mixedReads();
      try {
        const { stream } = source(chunks, size);
        const r = await engine.runStep('mixed', input(undefined, { stream }));
        expect(r.errors).toEqual([]);
        expect(r.body).toBe(expected(chunks * size));
      } finally {
        engine.dispose();
      }
    },
  );

  it('issue 27: gzip of an upload over the memory limit fails with ENGINE_MEMORY; the upload is not buffered whole', async () => {
    const engine = await createWorkflowEngine(
      workflow([
        scriptStep(
          'caught',
          `const b = context.bytes();
           try { b.gzip(context.getStream().readAll()); } catch (e) { context.setBody(e.code + ' ' + b.getSize(context.getStream().read(1000))); }`,
        ),
        scriptStep('uncaught', 'context.bytes().gzip(context.getStream().readAll())'),
      ]),
      { host: fakeHost(), data: {}, limits: { memoryBytes: 8 * MiB } },
    );
    try {
      const upload = source(64, MiB); // 64 MiB against the run's 8 MiB
      const caught = await engine.runStep('caught', input(undefined, { stream: upload.stream }));
      expect(caught).toMatchObject({ errored: false, body: 'ENGINE_MEMORY 1000' });
      expect(upload.pulled.chunks).toBe(9); // 8 MiB and one byte more: the read is too large
      const uncaught = await engine.runStep('uncaught', input(undefined, { stream: source(64, MiB).stream }));
      expect(uncaught.errors).toEqual([
        `resultsProcessor: ENGINE_MEMORY: stream read: more than ${8 * MiB} bytes at once`,
      ]);
    } finally {
      engine.dispose();
    }
  });

  // 1.8 s in a CI run on 2 shared cores (real servers, child processes or sandbox workers): an explicit timeout.
  it(
    'delivers every byte of a transferable source, its whole chunks moved to the worker',
    { timeout: 10_000 },
    async () => {
      const size = 64 * KiB;
      const chunks = 3 * (MiB / size) + 3;
      const engine = await mixedReads();
      try {
        const moved: Uint8Array[] = [];
        const t = source(chunks, size);
        const tracked = (async function* () {
          for await (const c of t.stream) yield (moved.push(c), c);
        })();
        const r = await engine.runStep(
          'mixed',
          input(undefined, { stream: tracked, streamTransferable: true }),
        );
        expect(r.errors).toEqual([]);
        expect(r.body).toBe(expected(chunks * size));
        // moved chunks are detached here
        expect(moved.filter((c) => c.byteLength === 0).length).toBeGreaterThan(chunks / 2);
      } finally {
        engine.dispose();
      }
    },
  );
});
