import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { validateBootstrap } from '@org/workflow-compiler';
import { Redactor } from '@org/workflow-engine';
import {
  closeAll,
  createOutput,
  createRuntime,
  createStringDecryptor,
  DEFAULT_LIMITS,
  DEFAULT_TIMEOUTS,
  hostPolicyOf,
  listenAll,
  type Listening,
  type Runtime,
  type RuntimeOptions,
} from '../src/index.js';

/** One deployment of a test runtime: its id, workflow and the record fields beyond the minimum. */
export interface TestDeployment {
  readonly id: string;
  readonly workflow: object;
  readonly record?: Record<string, unknown>;
}

/** A running test runtime with its captured output lines. */
export interface TestRuntime {
  readonly runtime: Runtime;
  readonly listening: Listening[];
  /** The data directory (step stores), removed at close. */
  readonly dataDir: string;
  /** Every output line, parsed. */
  lines(): Record<string, unknown>[];
  /** Workflow log messages (console.log, diagnosticLog) of one deployment. */
  logs(deploymentId: string): string[];
  /** Metric keys a deployment sent. */
  metrics(deploymentId: string): string[];
  port(deploymentId: string, serverId: string): number;
  close(): Promise<void>;
}

const open: TestRuntime[] = [];

/** Closes every runtime `startRuntime` started (call from afterEach). */
export async function closeRuntimes(): Promise<void> {
  for (const r of open.splice(0)) await r.close();
}

/** The records as validated bootstrap records (every server on port 0 unless the test names a port). */
export function recordsOf(deployments: readonly TestDeployment[]) {
  return validateBootstrap(
    JSON.stringify(
      deployments.map((d) => ({ deploymentId: d.id, remoteConfiguration: 'unused.oapp', ...d.record })),
    ),
  );
}

/** createRuntime over several deployments: real engines, servers on 127.0.0.1 port 0, listening, started. */
export async function startRuntime(
  deployments: readonly TestDeployment[],
  over: Partial<RuntimeOptions> = {},
): Promise<TestRuntime> {
  const raw: string[] = [];
  const redactor = new Redactor();
  const records = recordsOf(deployments);
  const dataDir = mkdtempSync(join(tmpdir(), 'wr-deploy-'));
  const ports: Record<string, number> = {};
  for (const r of records)
    for (const s of r.allowHttpServerAccess ?? []) ports[`${r.deploymentId}/${s.id}`] = 0;
  const runtime = await createRuntime({
    deployments: records.map((record, i) => ({
      record,
      workflow: deployments[i]!.workflow,
      policy: hostPolicyOf(record, []),
      source: 'test',
    })),
    redactor,
    output: createOutput((l) => raw.push(l), redactor, undefined, 'debug'),
    decryptor: createStringDecryptor([]),
    limits: DEFAULT_LIMITS,
    timeouts: DEFAULT_TIMEOUTS,
    dataDir,
    ports,
    bindAddress: '127.0.0.1',
    ...over,
  });
  const listening = await listenAll(runtime);
  runtime.startTriggers();
  const lines = () => raw.map((l) => JSON.parse(l) as Record<string, unknown>);
  const t: TestRuntime = {
    runtime,
    listening,
    dataDir,
    lines,
    logs: (id) =>
      lines()
        .filter(
          (l) => l['deploymentId'] === id && (l['source'] === 'console' || l['source'] === 'diagnostic'),
        )
        .map((l) => String(l['msg'])),
    metrics: (id) =>
      lines()
        .filter((l) => l['deploymentId'] === id && l['type'] === 'metric')
        .map((l) => String(l['key'])),
    port: (id, server) => listening.find((l) => l.deploymentId === id && l.id === server)!.port,
    async close() {
      await closeAll(runtime, 0);
      await runtime.stop(1000);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  open.push(t);
  return t;
}

/** A workflow file with one workflow of these steps. */
export const wf = (...steps: object[]) => ({ workflows: [{ name: 'w', steps }] });

/** A step with only a resultsProcessor. */
export const step = (stepId: string, script: string, trigger?: object) => ({
  stepId,
  ...(trigger === undefined ? {} : { trigger }),
  resultsProcessor: { script },
});
