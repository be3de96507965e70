import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeAjvProbe } from '@org/test-utils';
import { afterEach, describe, expect, it } from 'vitest';
import { makeKeys, makeRecord, tempDir, writePackage } from '../fixtures.js';
import { freePort, killAll, listeningLine, spawnMain } from './spawn.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const AGENT = join(HERE, '..', '..', 'dist', 'main.js');

// The agent's start compiles no JSON schema at run time: the bootstrap and workflow validators are generated at
// build time (docs/adr/0148), and ajv is loaded only by a run-time compile. A module given to node's `--import`
// writes, when the process exits, every ajv module in the CommonJS module cache (where node also keeps the
// CommonJS modules that ES modules import).

const dir = tempDir();
const probeEnv = writeAjvProbe(dir);
const loadedAjv = (out: string): string[] => JSON.parse(readFileSync(out, 'utf8')) as string[];

function post(port: number, path: string, body: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const headers = { 'content-type': 'text/plain' };
    const req = request({ host: '127.0.0.1', port, path, method: 'POST', headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode!, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

afterEach(() => killAll());

describe('agent start without ajv', () => {
  it('the probe sees ajv when a process loads it', () => {
    const out = join(dir, 'control.json');
    const ajv = createRequire(
      join(HERE, '..', '..', '..', '..', 'packages', 'workflow-compiler', 'package.json'),
    ).resolve('ajv');
    const r = spawnSync(
      process.execPath,
      ['--input-type=module', '-e', `await import(${JSON.stringify(ajv)})`],
      {
        env: { PATH: process.env['PATH'] ?? '', ...probeEnv(out) },
        timeout: 20_000,
      },
    );
    expect(r.status).toBe(0);
    expect(loadedAjv(out).some((k) => /[\\/]ajv[\\/]dist[\\/]ajv\.js$/.test(k))).toBe(true);
  }, 30_000);

  // With allowPackagerAccess the agent imports @org/packager, whose request validators are generated at build time too.
  for (const packager of [false, true])
    it(`a packaged workflow${packager ? ' granted the packager' : ''}: verified, validated, listening and answering, and ajv never loaded`, async () => {
      const keys = makeKeys();
      const port = await freePort();
      const record = makeRecord(keys, writePackage(dir, keys), {
        allowHttpServerAccess: [{ id: 'api', port }],
        ...(packager
          ? {
              allowPackagerAccess: true,
              allowFileAccess: [{ id: 'keys', directoryOrFile: dir, READ: true, LIST: true }],
              data: { resourceIds: ['keys'] },
            }
          : {}),
      });
      const bootstrap = join(dir, `bootstrap-${port}.json`);
      writeFileSync(bootstrap, JSON.stringify([record]));
      const out = join(dir, `agent-${port}.json`);
      const child = spawnMain(AGENT, { AGENT_BOOTSTRAP: bootstrap, ...probeEnv(out) });
      await listeningLine(child);
      expect(await post(port, '/echo', 'hi')).toEqual({ status: 200, body: 'hi!' });
      child.proc.kill('SIGTERM');
      expect(await child.exited).toBe(0);
      expect(loadedAjv(out)).toEqual([]);
    }, 60_000);
});
