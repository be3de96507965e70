import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { makeResourceDir } from '../helpers.js';

const APP = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const MAIN = join(APP, 'dist', 'main.js');

function run(args: string[], env: Record<string, string> = {}) {
  return spawnSync(process.execPath, [MAIN, ...args], {
    encoding: 'utf8',
    timeout: 20_000,
    env: { PATH: process.env['PATH'] ?? '', ...env },
  });
}

/** The one start-up failure line both services write (README "Exit codes"). */
function fatalLine(stderr: string): Record<string, unknown> {
  const lines = stderr.split('\n').filter((l) => l !== '');
  expect(lines).toHaveLength(1);
  const line = JSON.parse(lines[0]!) as Record<string, unknown>;
  expect(Object.keys(line).sort()).toEqual(['code', 'level', 'msg', 'ts']);
  expect(line['level']).toBe('fatal');
  return line;
}

describe('dist/main.js arguments and start-up failures', () => {
  beforeAll(() => {
    if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run pnpm build before the tests`);
  });

  it('--help prints the usage and exits 0 without starting', () => {
    const r = run(['--help']);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^Usage: node dist\/main\.js/);
    expect(r.stdout).toContain('LOG_LEVEL');
    expect(r.stdout).not.toContain('"listening"');
  });

  it('--version prints the package version and exits 0', () => {
    const { version } = JSON.parse(readFileSync(join(APP, 'package.json'), 'utf8')) as { version: string };
    const r = run(['--version']);
    expect([r.status, r.stdout]).toEqual([0, `${version}\n`]);
  });

  it('an unknown argument is one fatal line (not echoed) and exit 2', () => {
    const r = run(['--secret-looking-thing']);
    expect(r.status).toBe(2);
    expect(fatalLine(r.stderr)['code']).toBe('PACKAGER_USAGE');
    expect(r.stderr).not.toContain('secret-looking-thing');
  });

  it('a refused configuration is one fatal line naming the variable, exit 1', () => {
    const r = run([], { PORT: '0', LOG_LEVEL: 'loud' });
    expect(r.status).toBe(1);
    const line = fatalLine(r.stderr);
    expect(line['code']).toBe('PACKAGER_CONFIG_INVALID');
    expect(line['msg']).toContain('LOG_LEVEL');
  });

  it('S175 a plain token or a weak hash as caller token configuration: refused at start, without the value', () => {
    const token = 'oappt_' + 'Zm9vYmFyYmF6cXV4'.repeat(3);
    for (const value of [token, 'sha1:2fd4e1c67a2d28fced849ee1bb76e7391b93eb12 package ci']) {
      const r = run([], { PORT: '0', PACKAGER_TOKEN_HASHES: value });
      expect(r.status).toBe(1);
      const line = fatalLine(r.stderr);
      expect(line['code']).toBe('PACKAGER_CONFIG_INVALID');
      expect(line['msg']).toMatch(/^PACKAGER_TOKEN_HASHES line 1: /);
      expect(r.stderr + r.stdout).not.toContain(token);
      expect(r.stderr + r.stdout).not.toContain('2fd4e1c6');
    }
  });

  it('no caller tokens on an address other than loopback: refused at start unless PACKAGER_ALLOW_UNAUTHENTICATED=1', () => {
    const r = run([], { PORT: '0', PACKAGER_BIND_ADDRESS: '0.0.0.0' });
    expect(r.status).toBe(1);
    expect(fatalLine(r.stderr)['msg']).toMatch(/not loopback/);
  });

  it(
    'serves /ready and /metrics (with the process metrics) once listening',
    { timeout: 30_000 },
    async () => {
      const env = { PATH: process.env['PATH'] ?? '', PORT: '0', PACKAGER_RESOURCE_DIRS: makeResourceDir() };
      const proc = spawn(process.execPath, [MAIN], { env });
      const exited = new Promise((resolve) => proc.on('exit', resolve));
      let out = '';
      const port = await new Promise<number>((resolve, reject) => {
        proc.stdout.on('data', (d: Buffer) => {
          out += d.toString();
          const line = out.split('\n').find((l) => l.includes('"listening"'));
          if (line !== undefined) resolve((JSON.parse(line) as { port: number }).port);
        });
        void exited.then(() => reject(new Error(`exited: ${out}`)));
      });
      const base = `http://127.0.0.1:${port}`;
      expect(await (await fetch(`${base}/ready`)).json()).toEqual({ ok: true, status: 'ready' });
      const text = await (await fetch(`${base}/metrics`)).text();
      expect(text).toContain('packager_process_cpu_user_seconds_total');
      expect(text).toContain('packager_http_requests_total{method="GET",route="/ready",status="200"} 1');
      proc.kill('SIGTERM');
      expect(await exited).toBe(0);
    },
  );
});
