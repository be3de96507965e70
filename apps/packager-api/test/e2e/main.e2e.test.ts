import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { makeResourceDir, newKey, spec } from '../helpers.js';

const MAIN = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist', 'main.js');
const VERSION = (
  JSON.parse(readFileSync(join(dirname(MAIN), '..', 'package.json'), 'utf8')) as { version: string }
).version;

interface Child {
  proc: ChildProcessWithoutNullStreams;
  port: number;
  stdout: () => string;
  exited: Promise<number | null>;
}

function start(env: Record<string, string>): Promise<Child> {
  const proc = spawn(process.execPath, [MAIN], { env: { PATH: process.env['PATH'] ?? '', ...env } });
  let out = '';
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    proc.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      for (const line of out.split('\n')) {
        if (!line.includes('"listening"')) continue;
        resolve({ proc, port: (JSON.parse(line) as { port: number }).port, stdout: () => out, exited });
      }
    });
    void exited.then((code) => reject(new Error(`exited with ${code}: ${out}`)));
  });
}

// scripts/test.sh and `pnpm check` build before testing (and the unit tests import the packages' dist):
// a missing dist/main.js is a broken build, so it fails here instead of skipping these tests.
describe('dist/main.js', () => {
  beforeAll(() => {
    if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run pnpm build before the tests`);
  });

  it(
    'logs its port, serves /health, drains an in-flight request on SIGTERM and exits 0',
    { timeout: 30_000 },
    async () => {
      const child = await start({ PORT: '0', PACKAGER_RESOURCE_DIRS: makeResourceDir() });
      const base = `http://127.0.0.1:${child.port}`;
      expect(await (await fetch(`${base}/health`)).json()).toEqual({ ok: true });
      // Issue 27: the built service reads its OpenAPI version from its package.json, as --version does.
      const openapi = (await (await fetch(`${base}/openapi.json`)).json()) as { info: { version: string } };
      expect(openapi.info.version).toBe(VERSION);

      // An upload still being sent when SIGTERM arrives must complete.
      const packager = newKey('p', 'authenticated');
      const alice = newKey('a', 'authenticated');
      const body = JSON.stringify({
        keys: [spec(packager, 'secret'), spec(alice, 'public')],
        encryptionKeys: ['a'],
        packagerIdentityPrivateKey: 'p',
      });
      const boundary = 'e2eBoundary';
      const head = `--${boundary}\r\nContent-Disposition: form-data; name="body"\r\n\r\n${body}\r\n--${boundary}\r\nContent-Disposition: form-data; name="stream"; filename="s"\r\nContent-Type: application/octet-stream\r\n\r\nhel`;
      const tail = `lo\r\n--${boundary}--\r\n`;
      const answer = new Promise<{ status: number; text: string }>((resolve, reject) => {
        const req = request(`${base}/string-encrypt`, {
          method: 'POST',
          headers: {
            'content-type': `multipart/form-data; boundary=${boundary}`,
            'content-length': Buffer.byteLength(head + tail),
          },
        });
        req.on('response', (res) => {
          let text = '';
          res.on('data', (d: Buffer) => (text += d.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        });
        req.on('error', reject);
        req.write(head);
        setTimeout(() => {
          child.proc.kill('SIGTERM');
          setTimeout(() => req.end(tail), 300);
        }, 200);
      });
      const r = await answer;
      expect(r.status).toBe(200);
      expect(r.text.startsWith('-2/')).toBe(true);
      expect(await child.exited).toBe(0);
      expect(child.stdout()).toContain('"shutting down"');
    },
  );

  it(
    'refuses to start without the configured community directory: exit 1, a clear message, no stack',
    { timeout: 30_000 },
    async () => {
      const proc = spawn(process.execPath, [MAIN], {
        env: { PATH: process.env['PATH'] ?? '', PORT: '0', PACKAGER_RESOURCE_DIRS: '/definitely/missing' },
      });
      let err = '';
      proc.stderr.on('data', (d: Buffer) => (err += d.toString()));
      const code = await new Promise((resolve) => proc.on('exit', resolve));
      expect(code).toBe(1);
      expect(err).toContain('/definitely/missing');
      expect(err).not.toMatch(/\n\s+at /);
    },
  );
});
