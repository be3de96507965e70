import { existsSync, readdirSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UploadError, readUpload } from '../src/index.js';
import { fakeRequest } from './fake-request.js';
import {
  BOUNDARY,
  bodyPart,
  buildForm,
  generated,
  multipartHead,
  rawExchange,
  startServer,
  stillServes,
} from './helpers.js';
import type { TestServer } from './helpers.js';

const MiB = 1024 * 1024;
const L = 100 * MiB;

const openFds = (): number => (existsSync('/proc/self/fd') ? readdirSync('/proc/self/fd').length : 0);

/** Waits until `check` passes or `ms` elapsed; returns the elapsed time. */
async function within(ms: number, check: () => boolean | Promise<boolean>): Promise<number> {
  const start = performance.now();
  while (!(await check())) {
    if (performance.now() - start > ms) break;
    await new Promise((r) => setTimeout(r, 10));
  }
  return performance.now() - start;
}

let srv: TestServer;
const requests: { req: IncomingMessage; listeners: Record<string, number> }[] = [];
const EVENTS = ['data', 'end', 'error', 'close', 'aborted', 'readable'] as const;
// node:http itself adds `clearIncoming` on 'end' when a response finishes before its request was read.
const NODE_INTERNAL = new Set(['clearIncoming']);
const counts = (req: IncomingMessage): Record<string, number> =>
  Object.fromEntries(
    EVENTS.map((e) => [
      e,
      req.listeners(e).filter((l) => !NODE_INTERNAL.has((l as { name: string }).name)).length,
    ]),
  );

beforeAll(async () => {
  srv = await startServer({ multipartByteLimit: L, rawBodyByteLimit: L }, (server) => {
    // Runs before the upload handler: the request's listener counts before readUpload touched it.
    server.prependListener('request', (req: IncomingMessage) =>
      requests.push({ req, listeners: counts(req) }),
    );
  });
});
afterAll(() => srv.close());

/** The head and the first `sent` bytes of a form whose stream part is `total` bytes. */
function abortingUpload(total: number): { head: string; prefix: Buffer } {
  const prefix = buildForm(
    [bodyPart('{"a":1}'), { name: 'stream', filename: 's', type: 'application/octet-stream', content: '' }],
    {
      close: false,
    },
  ).subarray(0, -2); // drop the CRLF that would end the empty content
  return { head: multipartHead(prefix.length + total + 40), prefix };
}

describe('readUpload: client abort', () => {
  it('S25: a client abort after 50 MiB of a 100 MiB stream errors the stream with UPLOAD_ABORTED; fds and listeners back to baseline within 1 s', async () => {
    const fdsBefore = openFds();
    const errorsBefore = srv.errors.length;
    const { head, prefix } = abortingUpload(100 * MiB);
    const answer = await rawExchange(srv.port, head, [prefix, ...generated(100 * MiB)], {
      abortAfter: prefix.length + 50 * MiB,
    });
    expect(answer).toBeUndefined(); // no 200: the consumer never saw a clean end
    const elapsed = await within(1000, async () => {
      const connections = await new Promise<number>((r) => srv.server.getConnections((_e, n) => r(n)));
      return srv.errors.length > errorsBefore && connections === 0 && openFds() <= fdsBefore;
    });
    expect(elapsed).toBeLessThan(1000);
    expect(srv.errors.at(-1)).toThrowCode(UploadError, 'UPLOAD_ABORTED');
    const last = requests.at(-1)!;
    expect(counts(last.req)).toEqual(last.listeners);
    expect(await stillServes(srv.url)).toBe(true);
  });

  it('S25: a client abort inside the body part rejects readUpload with UPLOAD_ABORTED', async () => {
    const errorsBefore = srv.errors.length;
    const form = buildForm([bodyPart('x'.repeat(100_000))]);
    await rawExchange(srv.port, multipartHead(form.length), [form], { abortAfter: 50_000 });
    await within(1000, () => srv.errors.length > errorsBefore);
    expect(srv.errors.at(-1)).toThrowCode(UploadError, 'UPLOAD_ABORTED');
    const last = requests.at(-1)!;
    expect(counts(last.req)).toEqual(last.listeners);
    expect(await stillServes(srv.url)).toBe(true);
  });

  it('S25: a client abort of an octet-stream or JSON body ends in UPLOAD_ABORTED', async () => {
    for (const type of ['application/octet-stream', 'application/json']) {
      const errorsBefore = srv.errors.length;
      const head = `POST / HTTP/1.1\nHost: x\nContent-Type: ${type}\nContent-Length: ${4 * MiB}\n`;
      await rawExchange(srv.port, head, generated(4 * MiB), { abortAfter: MiB });
      await within(1000, () => srv.errors.length > errorsBefore);
      expect(srv.errors.at(-1), type).toThrowCode(UploadError, 'UPLOAD_ABORTED');
      const last = requests.at(-1)!;
      expect(counts(last.req)).toEqual(last.listeners);
    }
    expect(await stillServes(srv.url)).toBe(true);
  });

  it('errors the delivered stream with UPLOAD_ABORTED when the caller aborts the signal mid-stream', async () => {
    const local = await startServer(() => {
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 5); // far sooner than 64 MiB can arrive
      return { multipartByteLimit: L, signal: controller.signal };
    });
    try {
      const { head, prefix } = abortingUpload(64 * MiB);
      const answer = await rawExchange(local.port, head, [prefix, ...generated(64 * MiB)]);
      expect(answer?.status).toBe(400);
      expect(JSON.parse(answer!.body)).toEqual({ code: 'UPLOAD_ABORTED' });
      expect(local.errors.at(-1)).toThrowCode(UploadError, 'UPLOAD_ABORTED');
    } finally {
      await local.close();
    }
  });

  it('stops reading the request (unpiped, paused) when the consumer destroys the stream early', async () => {
    const { prefix } = abortingUpload(0);
    const req = fakeRequest({ 'content-type': `multipart/form-data; boundary=${BOUNDARY}` }, [
      prefix,
      ...generated(8 * MiB),
    ]);
    const up = await readUpload(req, { multipartByteLimit: L });
    const errored = new Promise((resolve) => up.stream!.on('error', resolve));
    up.stream!.destroy();
    await new Promise((r) => setTimeout(r, 20));
    expect(req.listenerCount('data')).toBe(0);
    expect(req.isPaused()).toBe(true);
    expect(await Promise.race([errored, Promise.resolve('no error')])).toBe('no error');
  });

  it('leaves no listener on the request after a success or any refusal', async () => {
    const forms = [
      buildForm([bodyPart('{}'), { name: 'stream', filename: 's', content: 'abc' }]),
      buildForm([{ name: '__proto__', content: 'x' }]),
      buildForm([bodyPart('{}')], { close: false }),
      buildForm([bodyPart('1'), bodyPart('2')]),
      Buffer.from('garbage'),
    ];
    for (const form of forms) {
      const answer = await rawExchange(srv.port, multipartHead(form.length), [form]);
      expect(answer?.status).toBeDefined();
      await new Promise((r) => setImmediate(r));
      const last = requests.at(-1)!;
      expect(counts(last.req), form.subarray(0, 120).toString()).toEqual(last.listeners);
    }
  });
});
