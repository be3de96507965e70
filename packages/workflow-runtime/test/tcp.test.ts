import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { TcpTriggerServer } from '../src/tcp/server.js';
import { closeRuntimes, startRuntime, step, wf, type TestDeployment, type TestRuntime } from './helpers.js';

// The tcp trigger (docs/interfaces.md §4.4, ADR 0080) on real sockets, port 0.
afterEach(closeRuntimes);

const MiB = 1024 * 1024;

/** A deployment with a tcp server `ingest` whose step logs its body and message count. */
const ingest = (id: string, tcp: Record<string, unknown>, script?: string): TestDeployment => ({
  id,
  workflow: wf(
    step(
      id + '-collect',
      script ?? "console.log(context.getBody() + ' ' + context.getProperty('tcp.messages'))",
      {
        tcp: { server: 'ingest', ...tcp },
      },
    ),
    step('ping', "context.setBody('pong')", { http: { server: 'web', method: 'GET', path: '/ping' } }),
  ),
  record: {
    allowHttpServerAccess: [
      { id: 'ingest', port: 18095, tcp: true },
      { id: 'web', port: 18096 },
    ],
  },
});

/** Connects, writes `data`, half-closes, and resolves when the server has closed too. */
function send(port: number, data: Buffer | string): Promise<void> {
  return new Promise((resolve, reject) => {
    const s = connect(port, '127.0.0.1', () => s.end(data));
    s.on('error', reject);
    s.on('close', () => resolve());
    s.resume();
  });
}

async function until(ok: () => boolean, what: string, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const tcpServer = (t: TestRuntime, deploymentId: string) =>
  t.runtime.servers.find((s) => s.deploymentId === deploymentId && s.id === 'ingest')!
    .server as TcpTriggerServer;

const ping = async (t: TestRuntime, id: string) =>
  (await fetch(`http://127.0.0.1:${t.port(id, 'web')}/ping`)).text();

describe('tcp trigger', () => {
  it('runs the step per batch of messages, in order, with the delimiter stripped', async () => {
    const t = await startRuntime([
      ingest('logs', { delimiter: '\n', stripDelimiter: true, batchSize: 3, maxBatchWindowMillis: 10_000 }),
    ]);
    await send(t.port('logs', 'ingest'), 'a\nb\nc\nd\n');
    await until(() => t.logs('logs').length === 2, 'two runs');
    expect(t.logs('logs')).toEqual([
      '[{"message":"a"},{"message":"b"},{"message":"c"}] 3',
      '[{"message":"d"}] 1',
    ]);
    // Each run is in the step counters (the agent's `step counters` lines), as runs of every other trigger are.
    const counted = () => t.runtime.stepCounters().find((c) => c.stepId === 'logs-collect');
    await until(() => counted()?.running === 0, 'the counted runs');
    expect(counted()).toMatchObject({ deploymentId: 'logs', runs: 2, errors: 0, httpRuns: 0 });
  });

  it('cuts fixed-length messages; bytes that are not UTF-8 arrive as messageBase64', async () => {
    const t = await startRuntime([ingest('fixed', { fixedLength: 4 })]);
    await send(t.port('fixed', 'ingest'), Buffer.from([0xff, 0xfe, 0, 1, 0x61, 0x62, 0x63, 0x64, 0x7a]));
    await until(() => t.logs('fixed').length === 2, 'two runs');
    expect(t.logs('fixed')).toEqual(['[{"messageBase64":"//4AAQ=="}] 1', '[{"message":"abcd"}] 1']);
  });

  it('S150 closes a client sending 100 MiB without a delimiter at the buffer limit; other deployments keep serving', async () => {
    const t = await startRuntime(
      [ingest('flood', { delimiter: '\n' }), ingest('calm', { delimiter: '\n' })],
      { tcp: { maxFrameBytes: 64 * 1024, maxQueuedBytes: 128 * 1024 } },
    );
    let written = 0;
    const flood = new Promise<void>((resolve) => {
      const s = connect(t.port('flood', 'ingest'), '127.0.0.1');
      const chunk = Buffer.alloc(MiB, 'x');
      const pump = () => {
        while (written < 100 * MiB && !s.destroyed) {
          written += chunk.length;
          if (!s.write(chunk)) return void s.once('drain', pump);
        }
        s.end();
      };
      s.on('connect', pump);
      s.on('error', () => undefined);
      s.on('close', () => resolve());
    });
    // While the flood goes on, the other deployment answers HTTP and takes its own tcp messages.
    expect(await ping(t, 'calm')).toBe('pong');
    await send(t.port('calm', 'ingest'), 'still here\n');
    await flood;
    expect(written).toBeLessThan(100 * MiB);
    expect(
      t.lines().find((l) => l['msg'] === 'tcp connection closed' && l['deploymentId'] === 'flood'),
    ).toMatchObject({
      level: 'warn',
      reason: 'message over maxFrameBytes',
    });
    await until(() => t.logs('calm').length === 1, 'the calm run');
    expect(t.logs('calm')).toEqual(['[{"message":"still here\\n"}] 1']);
    expect(t.logs('flood')).toEqual([]);
    expect(await ping(t, 'flood')).toBe('pong');
  });

  it('stops reading a flooding client while its slow runs catch up; other deployments keep serving', async () => {
    const t = await startRuntime(
      [
        ingest('slow', { delimiter: '\n', batchSize: 1000 }, "context.sleep(200); console.log('batch')"),
        ingest('calm', { delimiter: '\n' }),
      ],
      { tcp: { maxFrameBytes: 1024, maxQueuedBytes: 64 * 1024 } },
    );
    const flood = connect(t.port('slow', 'ingest'), '127.0.0.1');
    flood.on('error', () => undefined);
    await new Promise((r) => flood.once('connect', r));
    flood.write(Buffer.from(`${'x'.repeat(1023)}\n`.repeat(64 * 1024)));
    expect(await ping(t, 'calm')).toBe('pong');
    await send(t.port('calm', 'ingest'), 'still here\n');
    await until(
      () => t.logs('slow').length >= 2 && t.logs('calm').length === 1,
      'two slow batches and the calm run',
    );
    // Unthrottled, 64 MiB over loopback is read in well under one slow run; here most of it still waits.
    expect(flood.writableLength).toBeGreaterThan(32 * MiB);
    flood.destroy();
  });

  // 1.5 s in a CI run on 2 shared cores (real servers, child processes or sandbox workers): an explicit timeout.
  it(
    'S151 holds at most maxConnections of 1,000 idle connections and closes idle ones after idleMs',
    { timeout: 10_000 },
    async () => {
      const t = await startRuntime(
        [ingest('idle', { delimiter: '\n' }), ingest('busy', { delimiter: '\n' })],
        {
          tcp: { maxConnections: 20, idleMs: 300 },
        },
      );
      const server = tcpServer(t, 'idle');
      let most = 0;
      let accepted = 0;
      server.on('connection', () => {
        accepted++;
        most = Math.max(most, server.connectionCount);
      });
      const closed = Promise.all(
        Array.from({ length: 1000 }, () => {
          const s = connect(t.port('idle', 'ingest'), '127.0.0.1');
          return new Promise<void>((resolve) => {
            s.on('error', () => undefined);
            s.on('close', () => resolve());
          });
        }),
      );
      expect(await ping(t, 'busy')).toBe('pong');
      await closed;
      // Idle ones closing make room for later ones: every connection was either served or refused at accept.
      expect(most).toBeLessThanOrEqual(20);
      expect(accepted + server.droppedConnections).toBe(1000);
      expect(server.droppedConnections).toBeGreaterThan(0);
      expect(server.connectionCount).toBe(0);
      const idle = t.lines().filter((l) => l['msg'] === 'tcp connection closed' && l['reason'] === 'idle');
      expect(idle).toHaveLength(accepted);
      expect(t.lines().filter((l) => l['msg'] === 'tcp connections refused')).toHaveLength(1);
      // The server takes new connections again once the idle ones are gone.
      await send(t.port('idle', 'ingest'), 'after\n');
      await until(() => t.logs('idle').length === 1, 'a run after the siege');
    },
  );

  it('logs identical failing runs once (then a summary), and keeps running later batches', async () => {
    const t = await startRuntime([
      ingest('broken', { delimiter: '\n' }, "throw new Error('no ' + context.getBody().length)"),
    ]);
    await send(t.port('broken', 'ingest'), 'x\nx\nx\n');
    await until(
      () => t.lines().filter((l) => l['msg'] === 'step run' && l['trigger'] === 'tcp').length === 3,
      'three runs',
    );
    const errored = t.lines().filter((l) => l['msg'] === 'step errored' && l['deploymentId'] === 'broken');
    expect(errored).toHaveLength(1);
    expect(errored[0]).toMatchObject({ trigger: 'tcp', stepId: 'broken-collect' });
  });
});

describe('tcp trigger start-up checks', () => {
  const bad = (steps: object[], servers: object[]): TestDeployment => ({
    id: 'd',
    workflow: wf(...steps),
    record: { allowHttpServerAccess: servers },
  });
  const tcpStep = (server: string, extra: object = {}) =>
    step('t', 'x', { tcp: { server, delimiter: '\n', ...extra } });

  const cases: [string, object[], object[], string][] = [
    [
      'a tcp trigger on a server without tcp: true',
      [tcpStep('web')],
      [{ id: 'web', port: 1 }],
      'AGENT_TRIGGER_INVALID',
    ],
    ['a tcp trigger on an undeclared server', [tcpStep('nope')], [], 'AGENT_TRIGGER_INVALID'],
    [
      'an http trigger on a tcp server',
      [step('h', 'x', { http: { server: 'raw', path: '/' } })],
      [{ id: 'raw', port: 1, tcp: true }],
      'AGENT_TRIGGER_INVALID',
    ],
    [
      'two tcp triggers on one server',
      [tcpStep('raw'), step('u', 'x', { tcp: { server: 'raw', fixedLength: 2 } })],
      [{ id: 'raw', port: 1, tcp: true }],
      'AGENT_TRIGGER_DUPLICATE',
    ],
    [
      'a fixedLength over the message limit',
      [step('t', 'x', { tcp: { server: 'raw', fixedLength: 2 * MiB } })],
      [{ id: 'raw', port: 1, tcp: true }],
      'AGENT_TRIGGER_INVALID',
    ],
    [
      'a tcp server with inProcOnly',
      [],
      [{ id: 'raw', tcp: true, inProcOnly: true }],
      'AGENT_TRIGGER_INVALID',
    ],
  ];
  it.each(cases.map(([what, steps, servers, code]) => ({ what, steps, servers, code })))(
    'refuses $what with $code',
    async ({ steps, servers, code }) => {
      await expect(startRuntime([bad(steps, servers)])).rejects.toMatchObject({ code });
    },
  );

  it('refuses tcp limits that are not positive integers with a RangeError', async () => {
    await expect(startRuntime([ingest('x', { delimiter: '\n' })], { tcp: { idleMs: 0 } })).rejects.toThrow(
      RangeError,
    );
  });
});
