import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseKeyTuple } from '@org/envelope-crypto';
import { validateBootstrap, type Bootstrap } from '@org/workflow-compiler';
import { createApp, type Agent } from '../src/app.js';
import { DEFAULT_LIMITS, DEFAULT_TIMEOUTS, type Limits, type Timeouts } from '../src/startup/config.js';
import type { LogLevel, PackagerCapability, RuntimeMetrics } from '@org/workflow-runtime';
import { closeAll, listenAll, type Listening } from '@org/workflow-runtime';
import { tuple, type TestKeys } from './fixtures.js';

/** A running agent with its captured stdout lines. */
export interface RunningAgent {
  agent: Agent;
  lines: string[];
  listening: Listening[];
  /** Base URL of a server (default: the first). */
  url(serverId?: string, deploymentId?: string): string;
  close(): Promise<void>;
}

export interface StartOptions {
  allowPrivateNetworkHosts?: string[];
  limits?: Partial<Limits>;
  stringKeys?: string;
  timeouts?: Partial<Timeouts>;
  /** Values from the secrets file (AppDeps.secrets). */
  secrets?: string[];
  /** An already validated bootstrap (instead of validating `records`). */
  bootstrap?: Bootstrap;
  logLevel?: LogLevel;
  /** The engines' clock (default `Date.now`). */
  now?: () => number;
  /** AGENT_DATA_DIR (step persistence). */
  dataDir?: string;
  /** Where metric events go (AppDeps.metrics). */
  metrics?: RuntimeMetrics;
  /** The packager capability (AppDeps.packager; default @org/packager's). */
  packager?: PackagerCapability;
}

/** createApp on port 0 for every server, real engine, captured output. */
export async function startAgent(
  keys: TestKeys,
  records: object[],
  o: StartOptions = {},
): Promise<RunningAgent> {
  const lines: string[] = [];
  const bootstrap = o.bootstrap ?? validateBootstrap(JSON.stringify(records));
  const ports: Record<string, number> = {};
  for (const r of bootstrap)
    for (const s of r.allowHttpServerAccess ?? []) ports[`${r.deploymentId}/${s.id}`] = 0;
  const agent = await createApp({
    bootstrap,
    config: {
      stringSecretKeys: [parseKeyTuple(o.stringKeys ?? tuple(keys.packager, keys.agent))],
      allowUnpackaged: false,
      allowPrivateNetworkHosts: o.allowPrivateNetworkHosts ?? [],
      limits: { ...DEFAULT_LIMITS, ...o.limits },
      timeouts: { ...DEFAULT_TIMEOUTS, ...o.timeouts },
      logLevel: o.logLevel,
      dataDir: o.dataDir,
    },
    secrets: o.secrets,
    sink: (line) => lines.push(line),
    ports,
    now: o.now,
    metrics: o.metrics,
    packager: o.packager,
  });
  const listening = await listenAll(agent);
  agent.startTriggers();
  return {
    agent,
    lines,
    listening,
    url(serverId, deploymentId) {
      const l = listening.find(
        (x) =>
          (serverId === undefined || x.id === serverId) &&
          (deploymentId === undefined || x.deploymentId === deploymentId),
      );
      return `http://127.0.0.1:${l!.port}`;
    },
    async close() {
      await closeAll(agent, 100);
      await agent.stop(1000);
    },
  };
}

/** A loopback HTTP server that records every request it gets. */
export interface Upstream {
  server: Server;
  port: number;
  requests: { method: string; url: string; headers: IncomingMessage['headers']; body: string }[];
  close(): Promise<void>;
}

export async function startUpstream(): Promise<Upstream> {
  const requests: Upstream['requests'] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests.push({
        method: req.method!,
        url: req.url!,
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
      });
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ upstream: req.url }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    server,
    port: (server.address() as AddressInfo).port,
    requests,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

/** Waits until `predicate` holds (polling), or fails after `ms`. */
export async function until(predicate: () => boolean, ms = 3000): Promise<void> {
  const end = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}
