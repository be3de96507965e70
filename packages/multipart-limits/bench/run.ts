/**
 * Loopback throughput of a multipart upload through `readUpload` versus plain request piping.
 * Usage: pnpm --filter @org/multipart-limits bench [MiB]   (default 256). Never gates CI.
 */
import { createServer, request } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { readUpload } from '../src/index.js';

const MiB = 1024 * 1024;
const SIZE = Number(process.argv[2] ?? 256) * MiB;
const BOUNDARY = 'benchBoundary0123456789';
const BLOCK = Buffer.alloc(64 * 1024, 0x5a);
const PREFIX = Buffer.from(
  `--${BOUNDARY}\r\nContent-Disposition: form-data; name="body"\r\n\r\n{}\r\n` +
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="stream"; filename="s"\r\n` +
    `Content-Type: application/octet-stream\r\n\r\n`,
);
const SUFFIX = Buffer.from(`\r\n--${BOUNDARY}--\r\n`);

function counter(): Writable & { bytes: number } {
  const sink = new Writable({
    write(chunk: Buffer, _e, cb) {
      sink.bytes += chunk.length;
      cb();
    },
  }) as Writable & { bytes: number };
  sink.bytes = 0;
  return sink;
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const sink = counter();
  if (req.url === '/pipe') await pipeline(req, sink);
  else {
    const up = await readUpload(req, { multipartByteLimit: SIZE });
    await pipeline(up.stream!, sink);
  }
  res.end(String(sink.bytes));
}

function upload(port: number, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = request({
      port,
      host: '127.0.0.1',
      path,
      method: 'POST',
      headers: {
        'content-type': `multipart/form-data; boundary=${BOUNDARY}`,
        'content-length': PREFIX.length + SIZE + SUFFIX.length,
      },
    });
    req.on('error', reject);
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => resolve(performance.now() - started));
    });
    void (async () => {
      req.write(PREFIX);
      for (let sent = 0; sent < SIZE; sent += BLOCK.length) {
        if (!req.write(BLOCK)) await new Promise((r) => req.once('drain', r));
      }
      req.end(SUFFIX);
    })();
  });
}

async function main(): Promise<void> {
  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => res.writeHead(500).end(String(err)));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  for (const path of ['/pipe', '/read', '/pipe', '/read', '/pipe', '/read']) {
    const ms = await upload(port, path);
    const label = path === '/pipe' ? 'plain request piping' : 'readUpload multipart';
    console.log(
      `${label.padEnd(22)} ${(SIZE / MiB).toFixed(0)} MiB in ${ms.toFixed(0)} ms: ${(SIZE / MiB / (ms / 1000)).toFixed(0)} MiB/s`,
    );
  }
  server.close();
}

await main();
