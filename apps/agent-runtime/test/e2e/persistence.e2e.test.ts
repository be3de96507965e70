import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../fixtures.js';
import { freePort, killAll, listeningLine, spawnMain, type Child } from './spawn.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const AGENT = join(HERE, '..', '..', 'dist', 'main.js');

const WORKFLOW = {
  workflows: [
    {
      name: 's127',
      steps: [
        {
          stepId: 'tick',
          persistenceFile: 'counter.store',
          singleThreaded: 'return',
          trigger: { timer: { period: 10, delay: 10 } },
          resultsProcessor: {
            script: `const n = Number(context.getPersistedItem('n') || '0') + 1;
              context.setPersistedItem('n', String(n));
              context.sendMetric('counter', n);`,
          },
        },
        {
          stepId: 'read',
          persistenceFile: 'counter.store',
          trigger: { http: { server: 'api', method: 'GET', path: '/counter' } },
          resultsProcessor: { script: "context.setBody(String(context.getPersistedItem('n')))" },
        },
      ],
    },
  ],
};

afterEach(() => killAll());

/** Metric values from complete stdout lines (a kill may cut the last line short). */
function metricValues(child: Child): number[] {
  const lines = child.stdout().split('\n');
  lines.pop();
  return lines
    .filter((l) => l.includes('"type":"metric"'))
    .map((l) => (JSON.parse(l) as { key: string; value: number }).value);
}

async function until(check: () => boolean, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('condition not reached');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('S127: kill -9 during persisted writes', () => {
  it('S127: after a restart the stored counter is at least the last value reported before the kill', async () => {
    const dir = tempDir();
    const dataDir = join(dir, 'data');
    mkdirSync(dataDir);
    const wfPath = join(dir, 'workflow.json');
    writeFileSync(wfPath, JSON.stringify(WORKFLOW));
    const port = await freePort();
    const bootstrap = join(dir, 'bootstrap.json');
    writeFileSync(
      bootstrap,
      JSON.stringify([
        { deploymentId: 's127', remoteConfiguration: wfPath, allowHttpServerAccess: [{ id: 'api', port }] },
      ]),
    );
    const env = { AGENT_BOOTSTRAP: bootstrap, AGENT_ALLOW_UNPACKAGED: 'true', AGENT_DATA_DIR: dataDir };

    const first = spawnMain(AGENT, env, dir);
    await listeningLine(first);
    await until(() => metricValues(first).length >= 40);
    first.proc.kill('SIGKILL');
    await first.exited;
    const reported = metricValues(first);
    const last = Math.max(...reported);
    // Every run reported its own value, in order: the counter was written by each completed step.
    expect(reported).toEqual(reported.map((_, i) => i + 1));

    const second = spawnMain(AGENT, env, dir);
    await listeningLine(second);
    const stored = Number(await (await fetch(`http://127.0.0.1:${port}/counter`)).text());
    expect(stored).toBeGreaterThanOrEqual(last);
    second.proc.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  }, 120_000);
});
