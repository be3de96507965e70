import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { request } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { makeResourceDir } from '../helpers.js';

const MAIN = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist', 'main.js');

interface Line {
  msg: string;
  port?: number;
  worker?: number;
  workers?: number;
  status?: number;
}

/** GET on a fresh connection each time (`agent: false`), so node:cluster hands each one to the next worker. */
function getHealth(port: number): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/health', agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('dist/main.js with PACKAGER_WORKERS=2', () => {
  beforeAll(() => {
    if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run pnpm build before the tests`);
  });

  it(
    'starts two workers on one port, answers, and stops them all cleanly on SIGTERM',
    { timeout: 60_000 },
    async () => {
      const proc = spawn(process.execPath, [MAIN], {
        env: {
          PATH: process.env['PATH'] ?? '',
          PORT: '0',
          PACKAGER_WORKERS: '2',
          PACKAGER_RESOURCE_DIRS: makeResourceDir(),
        },
      });
      let out = '';
      let stderr = '';
      const lines = (): Line[] =>
        out
          .split('\n')
          .filter((l) => l.startsWith('{'))
          .map((l) => JSON.parse(l) as Line);
      proc.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
        proc.on('exit', (code, signal) => resolve({ code, signal })),
      );
      const listening = new Promise<Line[]>((resolve, reject) => {
        proc.stdout.on('data', (d: Buffer) => {
          out += d.toString();
          const ready = lines().filter((l) => l.msg === 'listening');
          if (ready.length === 2) resolve(ready);
        });
        void exited.then(({ code }) => reject(new Error(`exited with ${code}: ${out}${stderr}`)));
      });

      const ready = await listening;
      expect(lines()[0]).toMatchObject({ msg: 'cluster started', workers: 2 });
      expect(new Set(ready.map((l) => l.worker))).toEqual(new Set([1, 2]));
      expect(ready[0]!.port).toBe(ready[1]!.port);
      const port = ready[0]!.port!;
      for (let i = 0; i < 6; i++) expect(await getHealth(port)).toEqual({ status: 200, body: '{"ok":true}' });

      proc.kill('SIGTERM');
      expect(await exited).toEqual({ code: 0, signal: null });
      const all = lines();
      // Each worker drained and stopped by itself, then the primary reported the group stopped.
      expect(all.filter((l) => l.msg === 'shutting down')).toHaveLength(2);
      expect(all.filter((l) => l.msg === 'stopped' && l.workers === undefined)).toHaveLength(2);
      expect(all.at(-1)).toMatchObject({ msg: 'stopped', workers: 2 });
      expect(all.filter((l) => l.msg === 'request' && l.status === 200)).toHaveLength(6);
      expect(stderr).toBe('');
    },
  );

  it('stops the group with exit code 1 when a worker dies', { timeout: 60_000 }, async () => {
    const proc = spawn(process.execPath, [MAIN], {
      env: {
        PATH: process.env['PATH'] ?? '',
        PORT: '0',
        PACKAGER_WORKERS: '2',
        PACKAGER_RESOURCE_DIRS: makeResourceDir(),
      },
    });
    let out = '';
    const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
    const workerPids = new Promise<void>((resolve) => {
      proc.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.split('\n').filter((l) => l.includes('"listening"')).length === 2) resolve();
      });
    });
    await workerPids;
    // A worker is a child of the primary: find one and kill it hard, as a crash would.
    const children = execFileSync('ps', ['-o', 'pid=', '--ppid', String(proc.pid)], { encoding: 'utf8' })
      .split('\n')
      .map((s) => Number(s.trim()))
      .filter((n) => n > 0);
    expect(children).toHaveLength(2);
    process.kill(children[0]!, 'SIGKILL');
    expect(await exited).toBe(1);
    expect(out).toContain('worker exited unexpectedly');
  });
});
