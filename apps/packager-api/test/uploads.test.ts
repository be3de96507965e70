import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import {
  form,
  packageKeys,
  packageRequest,
  postForm,
  problem,
  sampleWorkflow,
  useServer,
} from './helpers.js';

const srv = useServer({ workflowBytes: 64 * 1024 });
const endpoint = () => `${srv.url}/workflow-package`;
const workflow = JSON.stringify(sampleWorkflow());

/** Sends raw bytes and resolves with what the server wrote before closing or within `ms`. */
function raw(text: string, ms = 1000, keepOpen = false): Promise<string> {
  const { port } = new URL(srv.url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), '127.0.0.1', () => socket.write(text));
    let out = '';
    socket.on('data', (d: Buffer) => (out += d.toString()));
    const done = () => {
      socket.destroy();
      resolve(out);
    };
    socket.on('close', done);
    if (!keepOpen) setTimeout(done, ms);
  });
}

async function stillServes(): Promise<void> {
  const res = await postForm(endpoint(), form(packageRequest(packageKeys()), workflow));
  expect(res.status).toBe(200);
}

describe('upload limits at the packager', () => {
  it('refuses Expect: 100-continue over the limit with 413 and no 100 Continue (S8)', async () => {
    const head =
      'POST /workflow-package HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n' +
      'Content-Type: multipart/form-data; boundary=b\r\nContent-Length: 104857600\r\n\r\n';
    const out = await raw(head);
    expect(out.startsWith('HTTP/1.1 413')).toBe(true);
    expect(out).not.toContain('100 Continue');
    expect(out).toContain('"code":"UPLOAD_REQUEST_TOO_LARGE"');
    await stillServes();
  });

  it('refuses Content-Encoding: gzip with 415 UPLOAD_CONTENT_ENCODING (S9)', async () => {
    const res = await fetch(endpoint(), {
      method: 'POST',
      headers: { 'content-type': 'multipart/form-data; boundary=b', 'content-encoding': 'gzip' },
      body: 'x',
    });
    expect(res.status).toBe(415);
    expect((await problem(res)).code).toBe('UPLOAD_CONTENT_ENCODING');
  });

  it('survives a client that aborts mid-upload; the next request succeeds', async () => {
    const body = JSON.stringify(packageRequest(packageKeys()));
    const part =
      `--b\r\nContent-Disposition: form-data; name="body"\r\n\r\n${body}\r\n` +
      `--b\r\nContent-Disposition: form-data; name="stream"; filename="w"\r\nContent-Type: application/octet-stream\r\n\r\n{"work`;
    const head = `POST /workflow-package HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: ${part.length + 500}\r\n\r\n`;
    await raw(head + part, 200);
    await stillServes();
  });

  it('rejects a lone surrogate in packageId as REQUEST_BODY_NOT_JSON (S66)', async () => {
    const text = JSON.stringify(packageRequest(packageKeys())).replace('"invoice-uploader"', '"\\ud800"');
    const res = await postForm(endpoint(), form(text, workflow, true));
    expect(res.status).toBe(400);
    expect((await problem(res)).code).toBe('REQUEST_BODY_NOT_JSON');
  });

  it('rejects invalid UTF-8 in the body part with UPLOAD_BODY_NOT_UTF8 (S67)', async () => {
    const body = Buffer.concat([
      Buffer.from('--b\r\nContent-Disposition: form-data; name="body"\r\n\r\n'),
      Buffer.from([0x7b, 0x22, 0xc3, 0x28, 0x22, 0x7d]),
      Buffer.from(`\r\n--b\r\nContent-Disposition: form-data; name="stream"; filename="w"\r\n`),
      Buffer.from(`Content-Type: application/octet-stream\r\n\r\n${workflow}\r\n--b--\r\n`),
    ]);
    const res = await fetch(endpoint(), {
      method: 'POST',
      headers: { 'content-type': 'multipart/form-data; boundary=b' },
      body,
    });
    expect(res.status).toBe(400);
    expect((await problem(res)).code).toBe('UPLOAD_BODY_NOT_UTF8');
  });
});
