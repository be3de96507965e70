import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { connect } from 'node:net';
import type { AddressInfo, Socket } from 'node:net';
import { UPLOAD_STATUS_BY_CODE, isUploadError, readUpload } from '../src/index.js';
import type { ReadUploadOptions, UploadErrorCode } from '../src/index.js';

/** The code → status table the test servers answer with (the package's own). */
export const STATUS: Record<UploadErrorCode, number> = UPLOAD_STATUS_BY_CODE;

/** What the test server answers on success. */
export interface Echo {
  kind: string;
  body?: string;
  bytes: number;
  sha?: string;
  /** `Upload.streamFilename`, when set. */
  filename?: string;
}

export interface TestServer {
  server: Server;
  port: number;
  url: string;
  /** Every error readUpload or the delivered stream produced, in order. */
  errors: unknown[];
  close(): Promise<void>;
}

export function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

async function consume(req: IncomingMessage, res: ServerResponse, options: ReadUploadOptions): Promise<void> {
  const up = await readUpload(req, options);
  const hash = createHash('sha256');
  let bytes = 0;
  if (up.stream) {
    for await (const chunk of up.stream as AsyncIterable<Buffer>) {
      hash.update(chunk);
      bytes += chunk.length;
    }
  }
  const echo: Echo = {
    kind: up.kind,
    body: up.body,
    bytes,
    ...(up.stream ? { sha: hash.digest('hex') } : {}),
    ...(up.streamFilename === undefined ? {} : { filename: up.streamFilename }),
  };
  const payload = JSON.stringify(echo);
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) });
  res.end(payload);
}

/** A handler like the apps': readUpload, then 200 with an echo, or the mapped status with `{ code }`. */
export function uploadHandler(
  optionsFor: (req: IncomingMessage) => ReadUploadOptions,
  errors: unknown[],
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    consume(req, res, optionsFor(req)).catch((err: unknown) => {
      errors.push(err);
      if (res.headersSent || res.destroyed) return;
      const payload = JSON.stringify({ code: isUploadError(err) ? err.code : 'INTERNAL' });
      res.writeHead(isUploadError(err) ? STATUS[err.code] : 500, {
        connection: 'close',
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(payload),
      });
      res.end(payload);
      // Lingering close, as an app may do: discard what the client still sends so it can read the answer.
      req.resume();
    });
  };
}

/** Starts a real node:http server on 127.0.0.1, port 0. */
export async function startServer(
  options: ReadUploadOptions | ((req: IncomingMessage) => ReadUploadOptions),
  setup?: (server: Server, errors: unknown[]) => void,
): Promise<TestServer> {
  const errors: unknown[] = [];
  const optionsFor = typeof options === 'function' ? options : () => options;
  const server = createServer(uploadHandler(optionsFor, errors));
  setup?.(server, errors);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    server,
    port,
    url: `http://127.0.0.1:${port}/`,
    errors,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** One multipart part for {@link buildForm}. */
export interface PartSpec {
  name?: string;
  filename?: string;
  type?: string;
  headers?: string[];
  content: string | Uint8Array;
}

export const BOUNDARY = 'testBoundary7MA4YWxkTrZu0gW';

/** Builds a multipart/form-data body by hand, so tests control every byte. */
export function buildForm(parts: PartSpec[], opts: { boundary?: string; close?: boolean } = {}): Buffer {
  const b = opts.boundary ?? BOUNDARY;
  const out: Buffer[] = [];
  for (const p of parts) {
    const disp = [`form-data`];
    if (p.name !== undefined) disp.push(`name="${p.name}"`);
    if (p.filename !== undefined) disp.push(`filename="${p.filename}"`);
    const lines = p.headers ?? [
      `Content-Disposition: ${disp.join('; ')}`,
      ...(p.type === undefined ? [] : [`Content-Type: ${p.type}`]),
    ];
    out.push(Buffer.from(`--${b}\r\n${lines.join('\r\n')}\r\n\r\n`, 'latin1'));
    out.push(typeof p.content === 'string' ? Buffer.from(p.content) : Buffer.from(p.content));
    out.push(Buffer.from('\r\n'));
  }
  if (opts.close !== false) out.push(Buffer.from(`--${b}--\r\n`));
  return Buffer.concat(out);
}

/** A `stream` file part. */
export function streamPart(content: Uint8Array | string): PartSpec {
  return { name: 'stream', filename: 'stream.bin', type: 'application/octet-stream', content };
}

/** A `body` field part. */
export function bodyPart(content: string | Uint8Array): PartSpec {
  return { name: 'body', type: 'application/json', content };
}

/** Parsed answer of a raw exchange. */
export interface RawAnswer {
  status: number;
  head: string;
  body: string;
  /** Every byte received, including interim 1xx answers. */
  raw: string;
}

function parseAnswer(raw: Buffer): RawAnswer | undefined {
  let start = 0;
  for (;;) {
    const end = raw.indexOf('\r\n\r\n', start);
    if (end < 0) return undefined;
    const head = raw.toString('latin1', start, end);
    const status = Number(head.slice(9, 12));
    if (status >= 100 && status < 200) {
      start = end + 4;
      continue;
    }
    const length = /\r\ncontent-length: *(\d+)/i.exec(head);
    const body = raw.subarray(end + 4);
    if (length === null || body.length < Number(length[1])) return undefined;
    return { status, head, body: body.toString('utf8', 0, Number(length[1])), raw: raw.toString('latin1') };
  }
}

/** Options of {@link rawExchange}. */
export interface RawOptions {
  /** Destroy the socket after writing this many body bytes (client abort). */
  abortAfter?: number;
  /** Wait this long before sending the body (for Expect: 100-continue). */
  bodyDelayMs?: number;
}

/**
 * Sends `head` and `body` over a raw TCP socket and resolves with the first final answer (or undefined when
 * the socket closed without one). Write errors after the server answered (EPIPE/ECONNRESET) are expected.
 */
export function rawExchange(
  port: number,
  head: string,
  body: Iterable<Uint8Array> | AsyncIterable<Uint8Array> = [],
  opts: RawOptions = {},
): Promise<RawAnswer | undefined> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let received = Buffer.alloc(0);
    let done = false;
    const finish = (answer: RawAnswer | undefined): void => {
      if (done) return;
      done = true;
      socket.destroy();
      resolve(answer);
    };
    socket.on('error', () => finish(parseAnswer(received)));
    socket.on('close', () => finish(parseAnswer(received)));
    socket.on('data', (d: Buffer) => {
      received = Buffer.concat([received, d]);
      const answer = parseAnswer(received);
      if (answer) finish(answer);
    });
    socket.write(head.replace(/\n/g, '\r\n') + '\r\n');
    void writeBody(socket, body, opts, () => done).then(() => {
      if (opts.abortAfter !== undefined) socket.destroy();
    });
  });
}

async function writeBody(
  socket: Socket,
  body: Iterable<Uint8Array> | AsyncIterable<Uint8Array>,
  opts: RawOptions,
  isDone: () => boolean,
): Promise<void> {
  if (opts.bodyDelayMs) await new Promise((r) => setTimeout(r, opts.bodyDelayMs));
  let sent = 0;
  for await (const chunk of body) {
    if (isDone() || socket.destroyed) return;
    const part =
      opts.abortAfter === undefined ? chunk : chunk.subarray(0, Math.max(0, opts.abortAfter - sent));
    sent += part.length;
    if (!socket.write(part)) await new Promise((r) => socket.once('drain', r).once('close', r));
    if (opts.abortAfter !== undefined && sent >= opts.abortAfter) return;
  }
}

/** A raw multipart POST head for `length` body bytes (or chunked when undefined). */
export function multipartHead(length: number | undefined, extra: string[] = [], boundary = BOUNDARY): string {
  return [
    'POST / HTTP/1.1',
    'Host: 127.0.0.1',
    `Content-Type: multipart/form-data; boundary=${boundary}`,
    length === undefined ? 'Transfer-Encoding: chunked' : `Content-Length: ${length}`,
    ...extra,
    '',
  ].join('\n');
}

/** Chunked transfer framing of `chunks` (for requests without Content-Length). */
export function* chunkedEncoding(chunks: Iterable<Uint8Array>): Generator<Uint8Array> {
  for (const c of chunks) {
    if (c.length === 0) continue;
    yield Buffer.concat([Buffer.from(`${c.length.toString(16)}\r\n`), c, Buffer.from('\r\n')]);
  }
  yield Buffer.from('0\r\n\r\n');
}

/** Generates `total` pseudo-random bytes in chunks of `chunkSize` (deterministic). */
export function* generated(total: number, chunkSize = 64 * 1024): Generator<Buffer> {
  const block = Buffer.alloc(chunkSize);
  let x = 0x9e3779b9;
  for (let i = 0; i < chunkSize; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    block[i] = x & 0xff;
  }
  for (let sent = 0; sent < total; sent += chunkSize) {
    const out = Buffer.from(block.subarray(0, Math.min(chunkSize, total - sent)));
    out[0] = (sent / chunkSize) & 0xff;
    yield out;
  }
}

/** SHA-256 of what {@link generated} yields. */
export function generatedDigest(total: number, chunkSize = 64 * 1024): string {
  const h = createHash('sha256');
  for (const c of generated(total, chunkSize)) h.update(c);
  return h.digest('hex');
}

/** Posts `body` with fetch and returns the status and the parsed JSON answer. */
export async function post(
  url: string,
  body: Parameters<typeof fetch>[1] extends infer I ? (I extends { body?: infer B } ? B : never) : never,
  headers: Record<string, string> = {},
): Promise<{ status: number; json: Echo & { code?: string } }> {
  const res = await fetch(url, { method: 'POST', body, headers });
  return { status: res.status, json: (await res.json()) as Echo & { code?: string } };
}

/** Posts a hand-built form with fetch. */
export function postForm(url: string, form: Buffer, boundary = BOUNDARY): ReturnType<typeof post> {
  return post(url, form, { 'content-type': `multipart/form-data; boundary=${boundary}` });
}

/** Asserts-by-return that the server still answers a small valid JSON request. */
export async function stillServes(url: string): Promise<boolean> {
  const res = await post(url, '{"ok":true}', { 'content-type': 'application/json' });
  return res.status === 200 && res.json.body === '{"ok":true}';
}
