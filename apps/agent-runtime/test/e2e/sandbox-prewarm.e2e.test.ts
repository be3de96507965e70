import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeWorkersProbe } from '@org/test-utils';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../fixtures.js';
import { freePort, killAll, listeningLine, spawnMain } from './spawn.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const AGENT = join(HERE, '..', '..', 'dist', 'main.js');

// The agent starts its first sandbox worker as it starts, before any request (ADR 0149). A module given to node's
// `--import` reads the engine's count of started workers (the engine the agent imports: the same module) when the
// main thread exits, and writes it to a file.

const dir = tempDir();
const probeEnv = writeWorkersProbe(dir, join(HERE, '..', '..'));

const WORKFLOW = join(dir, 'hello.json');
writeFileSync(
  WORKFLOW,
  JSON.stringify({
    workflows: [
      {
        name: 'hello',
        steps: [
          {
            stepId: 'hello',
            trigger: { http: { server: 'api', method: 'GET', path: '/hello' } },
            resultsProcessor: { script: "context.setBody('hi');" },
          },
        ],
      },
    ],
  }),
);

async function startedWith(env: Record<string, string>): Promise<number> {
  const port = await freePort();
  const bootstrap = [
    {
      deploymentId: 'prewarm',
      remoteConfiguration: WORKFLOW,
      allowHttpServerAccess: [{ id: 'api', port, bindAddress: '127.0.0.1' }],
    },
  ];
  const out = join(dir, `workers-${port}.txt`);
  const child = spawnMain(AGENT, {
    AGENT_BOOTSTRAP: JSON.stringify(bootstrap),
    AGENT_ALLOW_UNPACKAGED: 'true',
    ...env,
    ...probeEnv(out),
  });
  await listeningLine(child);
  child.proc.kill('SIGTERM');
  expect(await child.exited).toBe(0);
  return Number(readFileSync(out, 'utf8'));
}

afterEach(() => killAll());

describe('the agent starts a sandbox worker before its first request', () => {
  it('one worker started when no request came', { timeout: 60_000 }, async () => {
    expect(await startedWith({})).toBe(1);
  });

  it('also with AGENT_OPTIMIZE_FOR_SIZE (then once the V8 flag is set)', { timeout: 60_000 }, async () => {
    expect(await startedWith({ AGENT_OPTIMIZE_FOR_SIZE: 'true' })).toBe(1);
  });

  it('none for --help and --version', { timeout: 60_000 }, () => {
    for (const arg of ['--help', '--version']) {
      const out = join(dir, `workers${arg}.txt`);
      const r = spawnSync(process.execPath, [AGENT, arg], {
        env: { PATH: process.env['PATH'] ?? '', ...probeEnv(out) },
        timeout: 30_000,
      });
      expect(r.status).toBe(0);
      expect(readFileSync(out, 'utf8')).toBe('0');
    }
  });
});
