// The two front-ends of the one packager library, started for a conformance test file: the Express service
// (apps/packager-api: createApp + createHttpServer, as its own tests start it) and the agent (apps/agent-runtime:
// its config, bootstrap loading and createApp, as main.ts runs them) hosting the built packager.oapp on a bootstrap
// derived from the built one. Both in this process, on 127.0.0.1 port 0, reading the same resource directory. The
// agent also runs a second deployment, `echo`, to show that it keeps answering while the packager is under a bad
// upload (S160).
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateKeyPair, keyToHex, type KeyPair } from '@org/envelope-crypto';
import { createPackage } from '@org/oapp-format';
import { canonicalize, compileWorkflow, hashWorkflow } from '@org/workflow-compiler';
import { afterAll, beforeAll } from 'vitest';
import { createApp as createAgent, type Agent } from '../../../agent-runtime/src/app.js';
import { loadBootstrap } from '../../../agent-runtime/src/startup/bootstrap-source.js';
import { loadConfig } from '../../../agent-runtime/src/startup/config.js';
import { loadBootstrapVariables } from '../../../agent-runtime/src/startup/variables.js';
import { closeAll, listenAll } from '@org/workflow-runtime';
import { createApp as createExpressApp } from '../../../packager-api/src/app.js';
import {
  DEFAULT_LIMITS,
  DEFAULT_TIMEOUTS,
  loadConfig as loadExpressConfig,
} from '../../../packager-api/src/config.js';
import { createLogger } from '../../../packager-api/src/logger.js';
import { createHttpServer } from '../../../packager-api/src/server.js';
import type { RawResponse } from '../../../../tools/test-utils/src/raw-client.js';

const HERE = dirname(fileURLToPath(import.meta.url));
export const APP = join(HERE, '..', '..');
const DIST = join(APP, 'dist');

/** The marker in the file outside the resource directory that S159's workflows try to reach. */
export const OUTSIDE_MARKER = 'outside-the-resource-directory-7c1f';

/** Where the built package and its bootstrap are, and whether this file had to build them. */
export interface Built {
  dir: string;
  rebuilt: boolean;
}

/** The workflow hash of the app's source, as `oapp hash packager.workflow.json --resource-dir resources` prints it. */
async function sourceHash(): Promise<string> {
  const text = readFileSync(join(APP, 'packager.workflow.json'));
  const { workflow } = await compileWorkflow(text, { resourceDirs: [join(APP, 'resources')] });
  return hashWorkflow(workflow);
}

/**
 * The built app: `dist/` when `pnpm build` made it from this source (its `packager.oapp.hash` is the source's workflow
 * hash and it has the throw-away bootstrap), else a fresh build into a temporary directory (3–6 s).
 */
export async function builtApp(): Promise<Built> {
  const hashFile = join(DIST, 'packager.oapp.hash');
  const current =
    existsSync(join(DIST, 'packager.bootstrap.json')) &&
    existsSync(hashFile) &&
    readFileSync(hashFile, 'utf8').trim() === (await sourceHash());
  if (current) return { dir: DIST, rebuilt: false };
  const out = mkdtempSync(join(tmpdir(), 'packager-conformance-build-'));
  // Only PATH: with release keys in the environment the build would write no bootstrap.
  execFileSync(process.execPath, [join(APP, 'scripts', 'build.mjs'), '--out', out, '--resource-dirs', out], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { PATH: process.env['PATH'] ?? '' },
  });
  return { dir: out, rebuilt: true };
}

/**
 * A resource directory with what the Express service's own tests use (`general/hello.js`, `health.workflow.json`)
 * and, for S159, ways out of it: a file and a directory linked to a directory beside it, and files whose names end
 * in `.` and in a space (so a refusal of those names is not just "not found").
 */
export function makeResourceDir(root: string): { resources: string; outside: string } {
  const resources = join(root, 'resources');
  const outside = join(root, 'outside');
  mkdirSync(join(resources, 'general'), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(resources, 'general', 'hello.js'), "context.setBody('hello');\n");
  writeFileSync(join(resources, 'health.workflow.json'), JSON.stringify(sampleWorkflow('health')));
  writeFileSync(join(resources, 'general', 'dot.js.'), `context.setBody('${OUTSIDE_MARKER}');\n`);
  writeFileSync(join(resources, 'general', 'space.js '), `context.setBody('${OUTSIDE_MARKER}');\n`);
  writeFileSync(join(outside, 'secret.js'), `context.setBody('${OUTSIDE_MARKER}');\n`);
  writeFileSync(join(outside, 'source.workflow.json'), JSON.stringify(sampleWorkflow(OUTSIDE_MARKER)));
  symlinkSync(join(outside, 'secret.js'), join(resources, 'general', 'link-out.js'));
  symlinkSync(join(outside, 'source.workflow.json'), join(resources, 'link-out.workflow.json'));
  symlinkSync(outside, join(resources, 'linked-dir'));
  return { resources, outside };
}

/** A small valid workflow; its first processor uses `/general/hello.js` (apps/packager-api/test/helpers.ts). */
export function sampleWorkflow(name = 'hello', resource = '/general/hello.js') {
  return {
    comment: 'stripped by compile',
    workflows: [
      {
        name,
        steps: [
          { stepId: `${name}-1`, trigger: { runOnce: true }, resultsProcessor: { resource } },
          { stepId: `${name}-2`, resultsProcessor: { script: "context.setBody('two')" } },
        ],
      },
    ],
  };
}

/** Options of {@link useFrontEnds}. */
export interface FrontEndOptions {
  /**
   * The whole-request timeout of both front-ends (the Express service's `PACKAGER_REQUEST_TIMEOUT_MS`, the agent's
   * `AGENT_REQUEST_TIMEOUT_MS`) and, capped by it, their header timeouts. Default: each one's own default.
   */
  requestMs?: number;
  /**
   * Caller token records (ADR 0140) for both: the Express service's `tokens`, the packager record's
   * `data.callerTokenHashes`. Default: none (every caller is served).
   */
  callerTokenHashes?: readonly string[];
}

/** Both front-ends of one test file, once they are up. */
export interface FrontEnds {
  /** Base URL of the Express service. */
  express: string;
  /** Base URL of the agent's `api` server of the packager deployment. */
  agent: string;
  /** Base URL of the agent's other deployment (`POST /echo` answers its body with `!` appended). */
  echo: string;
  /** The resource directory both read. */
  resources: string;
  /** A directory beside it (the target of its links out). */
  outside: string;
  /** The built app this file's agent runs. */
  built: Built;
  /** The agent's log lines (JSON), and the Express service's. */
  agentLines: string[];
  expressLines: string[];
}

/** An echo app for the agent's second deployment, packaged and pinned with its own fresh keys. */
function echoRecord(dir: string) {
  const packager = generateKeyPair('authenticated');
  const deployment = generateKeyPair('authenticated');
  const author = generateKeyPair('sign');
  const workflow = {
    workflows: [
      {
        name: 'echo',
        steps: [
          {
            stepId: 'echo',
            trigger: { http: { server: 'api', method: 'POST', path: '/echo' } },
            resultsProcessor: { script: "context.setBody(context.getBody() + '!')" },
          },
        ],
      },
    ],
  };
  const path = join(dir, 'echo.oapp');
  writeFileSync(
    path,
    createPackage({
      packageId: 'echo',
      content: new TextEncoder().encode(canonicalize(workflow)),
      packagerSecretKey: packager.secretKey,
      recipients: [deployment.publicKey!],
      signers: [{ secretKey: author.secretKey, signText: 'echo' }],
    }),
  );
  const key = (id: string, purpose: string, k: KeyPair, type: 'public' | 'secret') => ({
    id,
    purpose,
    type,
    keyHex: keyToHex(type === 'public' ? k.publicKey! : k.secretKey),
  });
  return {
    deploymentId: 'echo',
    remoteConfiguration: path,
    packaging: {
      packageId: 'echo',
      packagerIdentities: ['echo-packager'],
      requiredSigners: [{ id: 'echo-author' }],
    },
    keys: [
      key('echo-packager', 'authenticated', packager, 'public'),
      key('echo-deployment', 'authenticated', deployment, 'secret'),
      key('echo-author', 'sign', author, 'public'),
    ],
    allowHttpServerAccess: [{ id: 'api', port: 39577 }],
  };
}

/**
 * The built bootstrap with the test's resource directory as its one resource directory (the Express service reads
 * only that one too) and the echo deployment beside it; written mode 0600 (it holds secret keys).
 */
function derivedBootstrap(
  built: Built,
  resources: string,
  dir: string,
  callerTokenHashes?: readonly string[],
): string {
  const records = JSON.parse(readFileSync(join(built.dir, 'packager.bootstrap.json'), 'utf8')) as Record<
    string,
    unknown
  >[];
  const packager = records[0]!;
  packager['allowFileAccess'] = [
    { id: 'community-resources', directoryOrFile: resources, READ: true, LIST: true },
  ];
  packager['data'] = {
    resourceIds: ['community-resources'],
    ...(callerTokenHashes === undefined ? {} : { callerTokenHashes }),
  };
  const path = join(dir, 'bootstrap.json');
  writeFileSync(path, JSON.stringify([packager, echoRecord(dir)]), { mode: 0o600 });
  return path;
}

async function startExpress(resources: string, lines: string[], o: FrontEndOptions): Promise<Server> {
  const log = createLogger((line) => lines.push(line));
  const timeouts =
    o.requestMs === undefined
      ? DEFAULT_TIMEOUTS
      : {
          ...DEFAULT_TIMEOUTS,
          requestMs: o.requestMs,
          headersMs: Math.min(DEFAULT_TIMEOUTS.headersMs, o.requestMs),
        };
  // Through the service's own configuration reader, as PACKAGER_TOKEN_HASHES gives them.
  const tokens =
    o.callerTokenHashes === undefined
      ? undefined
      : loadExpressConfig({ PACKAGER_TOKEN_HASHES: o.callerTokenHashes.join(';') }).tokens;
  const app = createExpressApp({ limits: DEFAULT_LIMITS, resourceDirs: [resources], log, tokens });
  // The server judges an `Expect: 100-continue` request's token too, as main.ts starts it (S174).
  const server = createHttpServer(app, DEFAULT_LIMITS, timeouts, log, undefined, tokens);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

/** The agent as main.ts starts it (config, bootstrap, createApp, listen, triggers), without an admin listener. */
async function startAgent(bootstrapPath: string, dataDir: string, lines: string[], o: FrontEndOptions) {
  const env: Record<string, string> = { AGENT_DATA_DIR: dataDir, AGENT_ADMIN_PORT: 'off' };
  if (o.requestMs !== undefined) {
    env['AGENT_REQUEST_TIMEOUT_MS'] = String(o.requestMs);
    env['AGENT_HEADERS_TIMEOUT_MS'] = String(Math.min(20_000, o.requestMs));
  }
  const config = loadConfig(env, [bootstrapPath]);
  const { bootstrap, secrets } = await loadBootstrap(
    config.bootstrap,
    config.bootstrapSecretKey,
    loadBootstrapVariables({}),
  );
  const agent: Agent = await createAgent({
    bootstrap,
    config,
    secrets,
    sink: (line) => lines.push(line),
    ports: { 'packager/api': 0, 'echo/api': 0 },
  });
  const listening = await listenAll(agent);
  agent.startTriggers();
  const url = (deploymentId: string) =>
    `http://127.0.0.1:${listening.find((l) => l.deploymentId === deploymentId)!.port}`;
  return { agent, packager: url('packager'), echo: url('echo') };
}

/** Starting both (and, when dist/ is stale, building the app first) takes 1–8 s on a shared 2-core machine. */
export const START_MS = 60_000;

/** Starts both front-ends for the tests of one file (beforeAll) and stops them after it (afterAll). */
export function useFrontEnds(o: FrontEndOptions = {}): FrontEnds {
  const ctx = {} as FrontEnds;
  let root = '';
  let server: Server | undefined;
  let agent: Agent | undefined;
  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'packager-conformance-'));
    const { resources, outside } = makeResourceDir(root);
    ctx.built = await builtApp();
    ctx.resources = resources;
    ctx.outside = outside;
    ctx.agentLines = [];
    ctx.expressLines = [];
    const dataDir = join(root, 'agent-data');
    const [express, started] = await Promise.all([
      startExpress(resources, ctx.expressLines, o),
      startAgent(
        derivedBootstrap(ctx.built, resources, root, o.callerTokenHashes),
        dataDir,
        ctx.agentLines,
        o,
      ),
    ]);
    server = express;
    agent = started.agent;
    ctx.express = `http://127.0.0.1:${(express.address() as AddressInfo).port}`;
    ctx.agent = started.packager;
    ctx.echo = started.echo;
  }, START_MS);
  afterAll(async () => {
    if (server !== undefined) {
      server.closeAllConnections();
      await new Promise((resolve) => server!.close(resolve));
    }
    if (agent !== undefined) {
      await closeAll(agent, 100);
      await agent.stop(1000);
    }
    if (ctx.built?.rebuilt) rmSync(ctx.built.dir, { recursive: true, force: true });
    if (root !== '') rmSync(root, { recursive: true, force: true });
  });
  return ctx;
}

/** What both front-ends must agree on for one answer. */
export interface Seen {
  status: number;
  /** The body as Latin-1 text: byte for byte. */
  body: string;
  headers: Record<string, string | null>;
}

/** Headers of the answer itself (not the connection's or the server's own, like Date and Keep-Alive). */
export const ANSWER_HEADERS = [
  'content-type',
  'content-length',
  'allow',
  'accept-post',
  'vary',
  'cache-control',
  'x-content-type-options',
  'x-request-id',
  'www-authenticate',
] as const;

export async function seen(res: Response): Promise<Seen> {
  const headers: Record<string, string | null> = {};
  for (const h of ANSWER_HEADERS) headers[h] = res.headers.get(h);
  return { status: res.status, body: Buffer.from(await res.arrayBuffer()).toString('latin1'), headers };
}

/** A request, built afresh for each front-end (a FormData body is read once). */
export interface Req {
  path: string;
  init?: RequestInit;
}

/** Sends the request built by `make` to both front-ends with the same `X-Request-Id`, at once. */
export async function both(
  f: FrontEnds,
  id: string,
  make: () => Req,
): Promise<{ express: Response; agent: Response }> {
  const send = (base: string) => {
    const { path, init = {} } = make();
    return fetch(`${base}${path}`, {
      ...init,
      headers: { ...(init.headers as Record<string, string> | undefined), 'x-request-id': id },
    });
  };
  const [express, agent] = await Promise.all([send(f.express), send(f.agent)]);
  return { express, agent };
}

/** {@link both}, each answer read whole. */
export async function answers(
  f: FrontEnds,
  id: string,
  make: () => Req,
): Promise<{ express: Seen; agent: Seen }> {
  const r = await both(f, id, make);
  return { express: await seen(r.express), agent: await seen(r.agent) };
}

/** The problem `code` of a seen answer, or null. */
export function codeOf(s: Seen): string | null {
  if (!(s.headers['content-type'] ?? '').startsWith('application/problem+json') || s.body === '') return null;
  return (JSON.parse(s.body) as { code?: string }).code ?? null;
}

/** A JSON POST. */
export const json = (path: string, body: string, headers: Record<string, string> = {}): Req => ({
  path,
  init: { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } },
});

/** A multipart POST of the form `fd()` builds. */
export const multipart = (path: string, fd: () => FormData, headers: Record<string, string> = {}): Req => ({
  path,
  init: { method: 'POST', body: fd(), headers },
});

/** A raw `application/octet-stream` POST. */
export const octets = (path: string, body: Uint8Array, headers: Record<string, string> = {}): Req => ({
  path,
  init: { method: 'POST', body, headers: { 'content-type': 'application/octet-stream', ...headers } },
});

/** A multipart form with a `body` text part and a `stream` file part (apps/packager-api/test/helpers.ts). */
export function form(body: unknown, stream: string | Uint8Array, bodyIsText = false): FormData {
  const fd = new FormData();
  fd.append('body', bodyIsText && typeof body === 'string' ? body : JSON.stringify(body));
  fd.append('stream', new Blob([stream], { type: 'application/octet-stream' }), 'stream.bin');
  return fd;
}

// A raw HTTP/1.1 connection and the responses read off it: the shared test client.
export { RawClient, type RawResponse } from '../../../../tools/test-utils/src/raw-client.js';

/** The problem `code` of a raw response, or null. */
export function rawCode(r: RawResponse): string | null {
  if (!(r.headers['content-type'] ?? '').startsWith('application/problem+json') || r.body === '') return null;
  return (JSON.parse(r.body) as { code?: string }).code ?? null;
}
