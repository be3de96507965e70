import { existsSync, writeFileSync } from 'node:fs';
import { Agent, createServer, get, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { until } from '../agent-helpers.js';
import { makeKeys, makeRecord, tempDir, writePackage } from '../fixtures.js';
import { freePort, killAll, listeningLine, spawnMain } from './spawn.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const AGENT = join(HERE, '..', '..', 'dist', 'main.js');

// SIGTERM against a busy keep-alive client while a step is in flight. The step's outbound call is held by a
// loopback upstream until the test releases it; nothing here measures time, the assertions are on what the
// clients get and on the order of events. The shutdown timeout is 10 minutes: an agent that waited for it
// instead of exiting when the step ends fails by the test's own timeout.

const WORKFLOW = {
  workflows: [
    {
      name: 'shutdown',
      steps: [
        {
          stepId: 'block',
          trigger: { http: { server: 'api', method: 'GET', path: '/block' } },
          urlGenerator: { script: "context.setUrl('up', '/hold');" },
          resultsProcessor: { script: "context.setBody('released ' + context.getProperty('status_code'));" },
        },
        {
          stepId: 'fast',
          trigger: { http: { server: 'api', method: 'GET', path: '/fast' } },
          resultsProcessor: { script: "context.setBody('fast');" },
        },
      ],
    },
  ],
};

interface Reply {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

function fetchVia(agent: Agent, port: number, path: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    get({ host: '127.0.0.1', port, path, agent }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
      res.on('error', reject);
    }).on('error', reject);
  });
}

const keys = makeKeys();
const dir = tempDir();
afterEach(() => killAll());

describe.skipIf(!existsSync(AGENT))('agent dist/main.js on SIGTERM', () => {
  it(
    'answers a busy keep-alive client with Connection: close and never 500, and exits once the running step ends',
    { timeout: 60_000 },
    async () => {
      // The upstream the blocking step calls: it answers only when released.
      const held: ServerResponse[] = [];
      let entered = () => undefined as void;
      const reached = new Promise<void>((r) => (entered = r));
      const upstream = createServer((_req, res) => {
        held.push(res);
        entered();
      });
      await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
      const upPort = (upstream.address() as AddressInfo).port;

      const port = await freePort();
      const record = makeRecord(keys, writePackage(dir, keys, { workflow: WORKFLOW }), {
        allowHttpServerAccess: [{ id: 'api', port }],
        allowExternalHostAccess: [
          {
            id: 'up',
            host: `http://127.0.0.1:${upPort}/`,
            allowList: [{ method: 'GET', uriPattern: '/hold' }],
          },
        ],
      });
      const bootstrap = join(dir, 'shutdown-bootstrap.json');
      writeFileSync(bootstrap, JSON.stringify([record]));
      const child = spawnMain(AGENT, {
        AGENT_BOOTSTRAP: bootstrap,
        AGENT_ALLOW_PRIVATE_NETWORK_HOSTS: 'up',
        AGENT_SHUTDOWN_TIMEOUT_MS: '600000',
      });
      await listeningLine(child);
      const events: string[] = [];
      void child.exited.then(() => events.push('exited'));

      // 1. A keep-alive request whose step is in flight at SIGTERM.
      const blocked = fetchVia(new Agent({ keepAlive: true }), port, '/block');
      // Awaited below; a failed assertion before that must not leave an unhandled rejection.
      blocked.catch(() => undefined);
      await reached;

      // 2. A busy keep-alive client. A request counts as "after" when it was sent after the agent logged
      //    `shutting down` (written in the same turn as the drain starts).
      const shuttingDown = () => child.stdout().includes('"shutting down"');
      let before = 0;
      let warm = () => undefined as void;
      const warmed = new Promise<void>((r) => (warm = r));
      const after: Reply[] = [];
      const busy = new Agent({ keepAlive: true, maxSockets: 1 });
      const loop = (async () => {
        for (;;) {
          const issuedAfter = shuttingDown();
          let r: Reply;
          try {
            r = await fetchVia(busy, port, '/fast');
          } catch (err) {
            return (err as NodeJS.ErrnoException).code ?? 'error';
          }
          if (issuedAfter) after.push(r);
          else if (++before === 3) warm();
          if (r.status === 500) return 'http 500';
          if (after.length >= 20) return 'flood';
        }
      })();
      await warmed;

      child.proc.kill('SIGTERM');
      const end = await loop;
      // The loop may end (refused connection) before the agent's stdout reaches us.
      await until(shuttingDown, 30_000);
      expect(end).not.toBe('flood');
      expect(end).not.toBe('http 500');
      expect(after.length).toBeLessThanOrEqual(2);
      for (const r of after) {
        expect(r.headers.connection).toBe('close');
        expect([200, 503]).toContain(r.status);
      }
      expect(events).toEqual([]);

      // 3. Release the step: its answer says Connection: close, then the process exits.
      events.push('released');
      for (const res of held) res.end('ok');
      const r1 = await blocked;
      expect(r1).toMatchObject({ status: 200, body: 'released 200' });
      expect(r1.headers.connection).toBe('close');
      expect(await child.exited).toBe(0);
      expect(events).toEqual(['released', 'exited']);

      const lines = child
        .stdout()
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(lines.find((l) => l['msg'] === 'stopped')).toMatchObject({ drained: true });
      expect(lines.filter((l) => l['level'] === 'error')).toEqual([]);
      expect(child.stdout()).not.toContain('ENGINE_DISPOSED');
      await new Promise((r) => upstream.close(r));
    },
  );
});
