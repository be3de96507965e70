import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeKeys, makeRecord, tempDir, writePackage } from './fixtures.js';
import { startAgent, until, type RunningAgent } from './agent-helpers.js';

const LIMIT = 2048;
const RAW = 4096;
const keys = makeKeys();
const workflow = {
  workflows: [
    {
      name: 'limits',
      steps: [
        {
          stepId: 'up',
          trigger: { http: { server: 'api', method: 'POST', path: '/up', multiPartUploadByteLimit: LIMIT } },
          resultsProcessor: { script: "context.setBody('n=' + context.getStream().readAll().length)" },
        },
      ],
    },
  ],
};

let a: RunningAgent;
let port = 0;

beforeAll(async () => {
  a = await startAgent(keys, [makeRecord(keys, writePackage(tempDir(), keys, { workflow }))], {
    limits: { rawBodyBytes: RAW },
  });
  port = a.listening[0]!.port;
});
afterAll(() => a.close());

/** Sends raw bytes on a fresh connection and resolves with everything the server wrote before closing. */
function raw(text: string, waitMs = 300): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let got = '';
    socket.on('data', (d) => (got += d.toString()));
    socket.on('error', reject);
    socket.on('close', () => resolve(got));
    socket.write(text);
    setTimeout(() => socket.destroy(), waitMs);
  });
}

async function stillServes(): Promise<void> {
  const f = new FormData();
  f.append('stream', new Blob([new Uint8Array(10)], { type: 'application/octet-stream' }), 'f');
  expect(await (await fetch(`${a.url()}/up`, { method: 'POST', body: f })).text()).toBe('n=10');
}

const code = async (res: Response) => ((await res.json()) as { code: string }).code;

describe('upload limits at the trigger', () => {
  it('refuses an octet-stream body over the raw cap with 413 before reading it (S6)', async () => {
    const res = await fetch(`${a.url()}/up`, {
      method: 'POST',
      headers: { 'content-type': 'application/octet-stream' },
      body: new Uint8Array(RAW + 1),
    });
    expect([res.status, await code(res)]).toEqual([413, 'UPLOAD_BODY_TOO_LARGE']);
    await stillServes();
  });

  it('refuses a JSON body over the raw cap with 413, as the packager does; the next request succeeds', async () => {
    const res = await fetch(`${a.url()}/up`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify('x'.repeat(RAW)),
    });
    expect([res.status, await code(res)]).toEqual([413, 'UPLOAD_BODY_TOO_LARGE']);
    await stillServes();
  });

  it('discards a small refused body so the connection stays usable (no reset before the answer)', async () => {
    const reply = await raw(
      'POST /up HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\n' +
        `Content-Length: ${RAW + 1}\r\n\r\n${'x'.repeat(RAW + 1)}` +
        'GET /nope HTTP/1.1\r\nHost: x\r\n\r\n',
    );
    expect(reply).toMatch(/^HTTP\/1\.1 413/);
    expect(reply).toContain('UPLOAD_BODY_TOO_LARGE');
    expect(reply).toContain('HTTP/1.1 404');
  });

  it('refuses the same size sent chunked with 413 while streaming (S7)', async () => {
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        for (let i = 0; i <= RAW; i += 1024) c.enqueue(new Uint8Array(1024));
        c.close();
      },
    });
    const res = await fetch(`${a.url()}/up`, {
      method: 'POST',
      headers: { 'content-type': 'application/octet-stream' },
      body,
      duplex: 'half',
    });
    expect([res.status, await code(res)]).toEqual([413, 'UPLOAD_BODY_TOO_LARGE']);
    await stillServes();
  });

  it('answers Expect: 100-continue over the limit with 413 and no 100 Continue (S8)', async () => {
    const reply = await raw(
      'POST /up HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\n' +
        `Content-Length: ${RAW + 1}\r\nExpect: 100-continue\r\n\r\n`,
    );
    expect(reply).not.toContain('100 Continue');
    expect(reply).toMatch(/^HTTP\/1\.1 413/);
    expect(reply).toContain('UPLOAD_BODY_TOO_LARGE');
    await stillServes();
  });

  it('refuses Content-Encoding: gzip with 415 and decompresses nothing (S9)', async () => {
    const res = await fetch(`${a.url()}/up`, {
      method: 'POST',
      headers: { 'content-type': 'application/octet-stream', 'content-encoding': 'gzip' },
      body: new Uint8Array(10),
    });
    expect([res.status, await code(res)]).toEqual([415, 'UPLOAD_CONTENT_ENCODING']);
    expect(res.headers.get('accept-post')).toBeTruthy();
  });

  it.each([
    ['two stream parts', ['stream', 'stream'], 'UPLOAD_DUPLICATE_PART'],
    ['an unknown part name', ['other'], 'UPLOAD_UNKNOWN_PART'],
  ])('refuses %s with 400 and keeps serving (S19, S20)', async (_n, names, expected) => {
    const f = new FormData();
    for (const n of names)
      f.append(n, new Blob([new Uint8Array(1)], { type: 'application/octet-stream' }), 'f');
    const res = await fetch(`${a.url()}/up`, { method: 'POST', body: f });
    expect([res.status, await code(res)]).toEqual([400, expected]);
    await stillServes();
  });

  it('survives a form cut short and a client abort mid-upload (S21, S25)', async () => {
    const head =
      'POST /up HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=XyZ\r\nContent-Length: 1500\r\n\r\n' +
      '--XyZ\r\nContent-Disposition: form-data; name="stream"; filename="f"\r\nContent-Type: application/octet-stream\r\n\r\n';
    await raw(head + 'x'.repeat(100), 100);
    const cut = await raw(head.replace('Content-Length: 1500', 'Content-Length: 230') + 'x'.repeat(500));
    expect(cut).toMatch(/^HTTP\/1\.1 (400|413)/);
    await stillServes();
    // The aborted run saw an error and ended (it never waits forever on a dead upload).
    await until(() => a.agent.tracker.active === 0, 3000);
  });
});
