import { existsSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startUpstream, until, type Upstream } from '../agent-helpers.js';
import { makeKeys, makeRecord, tempDir, writePackage } from '../fixtures.js';
import { killAll, listeningLine, spawnMain } from './spawn.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const AGENT = join(HERE, '..', '..', 'dist', 'main.js');

/** A realistic timer-only app: every 100 ms it posts a reading to a collector and reports the answer as a metric. */
const TIMER_APP = {
  workflows: [
    {
      name: 'reporter',
      steps: [
        {
          stepId: 'report',
          trigger: { timer: { period: 100, delay: 0 } },
          urlGenerator: {
            script:
              "context.setHttpMethod('POST'); context.setUrl('collector', '/ingest'); context.setBody(JSON.stringify({ n: context.counter('sent', 1) }));",
          },
          resultsProcessor: {
            script: "context.sendMetric('collector.status', Number(context.getProperty('status_code')));",
          },
        },
      ],
    },
  ],
};

const keys = makeKeys();
const dir = tempDir();
let up: Upstream;

beforeAll(async () => {
  up = await startUpstream();
});
afterEach(() => killAll());
afterAll(() => up.close());

type Line = Record<string, unknown>;
const lines = (out: string): Line[] =>
  out
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Line);

describe.skipIf(!existsSync(AGENT))('agent dist/main.js with a timer-only deployment', () => {
  it(
    'keeps running with no listener, posts and reports every period, and exits 0 on SIGTERM',
    { timeout: 60_000 },
    async () => {
      const record = makeRecord(keys, writePackage(dir, keys, { workflow: TIMER_APP }), {
        allowHttpServerAccess: [],
        allowExternalHostAccess: [
          {
            id: 'collector',
            host: `http://127.0.0.1:${up.port}/`,
            allowList: [{ method: 'POST', uriPattern: '/ingest' }],
          },
        ],
      });
      const bootstrap = join(dir, 'timer-bootstrap.json');
      writeFileSync(bootstrap, JSON.stringify([record]));
      const agent = spawnMain(AGENT, {
        AGENT_BOOTSTRAP: bootstrap,
        AGENT_ALLOW_PRIVATE_NETWORK_HOSTS: 'collector',
      });
      expect((await listeningLine(agent))['servers']).toEqual([]);

      const metrics = () => lines(agent.stdout()).filter((l) => l['type'] === 'metric');
      await until(() => metrics().length >= 5 && up.requests.length >= 5, 30_000);
      // Before this scheduler the process exited with 0 right after start: timers were unref'd.
      expect(agent.proc.exitCode).toBeNull();
      expect(metrics()[0]).toMatchObject({ deploymentId: 'dep-1', key: 'collector.status', value: 200 });
      expect(up.requests.slice(0, 3).map((r) => [r.method, r.url, r.body])).toEqual([
        ['POST', '/ingest', '{"n":1}'],
        ['POST', '/ingest', '{"n":2}'],
        ['POST', '/ingest', '{"n":3}'],
      ]);

      agent.proc.kill('SIGTERM');
      expect(await agent.exited).toBe(0);
      const out = lines(agent.stdout());
      expect(out.find((l) => l['msg'] === 'stopped')).toMatchObject({ drained: true });
      const counters = out.find((l) => l['msg'] === 'step counters');
      expect(counters).toMatchObject({ deploymentId: 'dep-1', stepId: 'report', errors: 0, running: 0 });
      expect(counters!['runs']).toBeGreaterThanOrEqual(5);
      expect(agent.stderr()).toBe('');
    },
  );
});
