import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { makeKeys, makeRecord, tempDir, writePackage } from '../fixtures.js';
import { freePort, killAll, listeningLine, spawnMain } from './spawn.js';

const APP = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const AGENT = join(APP, 'dist', 'main.js');

const WORKFLOW = {
  workflows: [
    {
      name: 'hello',
      steps: [
        {
          stepId: 'hello',
          trigger: { http: { server: 'api', method: 'GET', path: '/hello' } },
          resultsProcessor: { script: "context.setBody('hi')" },
        },
      ],
    },
  ],
};

const keys = makeKeys();
const dir = tempDir();
afterEach(() => killAll());

function run(args: string[], env: Record<string, string> = {}) {
  return spawnSync(process.execPath, [AGENT, ...args], {
    encoding: 'utf8',
    timeout: 20_000,
    env: { PATH: process.env['PATH'] ?? '', AGENT_ADMIN_PORT: 'off', ...env },
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

describe.skipIf(!existsSync(AGENT))(
  'agent dist/main.js: admin listener, arguments, start-up failures',
  () => {
    it(
      'serves /health, /ready and /metrics on the admin port apart from the trigger servers',
      { timeout: 60_000 },
      async () => {
        const port = await freePort();
        const record = makeRecord(keys, writePackage(dir, keys, { workflow: WORKFLOW }), {
          allowHttpServerAccess: [{ id: 'api', port }],
        });
        const bootstrap = join(dir, 'admin-bootstrap.json');
        writeFileSync(bootstrap, JSON.stringify([record]));
        const agent = spawnMain(AGENT, { AGENT_BOOTSTRAP: bootstrap, AGENT_DATA_DIR: join(dir, 'data') });
        const listening = await listeningLine(agent);
        const [admin] = listening['admin'] as { port: number; address: string }[];
        expect(admin!.address).toBe('127.0.0.1');
        expect(admin!.port).not.toBe(port);
        const base = `http://127.0.0.1:${admin!.port}`;
        expect(await (await fetch(`${base}/health`)).json()).toEqual({ ok: true });
        expect(await (await fetch(`${base}/ready`)).json()).toEqual({ ok: true, status: 'ready' });
        expect(await (await fetch(`http://127.0.0.1:${port}/hello`)).text()).toBe('hi');
        // The trigger server does not answer admin paths: they belong to the workflows.
        expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).toBe(404);
        const text = await (await fetch(`${base}/metrics`)).text();
        expect(text).toContain(
          'agent_http_requests_total{deployment="dep-1",server="api",route="hello",method="GET",status="200"} 1',
        );
        expect(text).toContain('agent_process_cpu_user_seconds_total');
        agent.proc.kill('SIGTERM');
        expect(await agent.exited).toBe(0);
      },
    );

    it('--help and --version print and exit 0', () => {
      const help = run(['--help']);
      expect(help.status).toBe(0);
      expect(help.stdout).toMatch(/^Usage: node dist\/main\.js/);
      expect(help.stdout).toContain('AGENT_ADMIN_PORT');
      const { version } = JSON.parse(readFileSync(join(APP, 'package.json'), 'utf8')) as { version: string };
      const v = run(['--version']);
      expect([v.status, v.stdout]).toEqual([0, `${version}\n`]);
    });

    it('an unknown option is one fatal line and exit 2, without echoing it', () => {
      const r = run(['--verbose-secret']);
      expect(r.status).toBe(2);
      expect(fatalLine(r.stderr)['code']).toBe('AGENT_USAGE');
      expect(r.stderr).not.toContain('verbose-secret');
    });

    it('a missing bootstrap file is one fatal line naming the path, exit 1', () => {
      const path = join(dir, 'no-such-bootstrap.json');
      const r = run([path]);
      expect(r.status).toBe(1);
      const line = fatalLine(r.stderr);
      expect(line).toMatchObject({ code: 'AGENT_BOOTSTRAP_UNREADABLE' });
      expect(line['msg']).toBe(`the bootstrap file ${JSON.stringify(path)} does not exist`);
    });
  },
);
