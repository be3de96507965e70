import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AGENT_MAIN,
  APP,
  bootstrapCopy,
  build,
  freePort,
  listening,
  oapp,
  PACKAGER_API_MAIN,
  readBootstrap,
  start,
  stop,
  tempDir,
  type BootstrapRecord,
  type Child,
} from './helpers.js';

// The built package on the real agent process (apps/agent-runtime/dist/main.js), beside the Express service.
// A build takes 3-6 s, an agent or the Express service starts in 1-3 s, on this shared 2-core machine.
const BUILD_MS = 60_000;
const START_MS = 30_000;

let out = '';
beforeAll(async () => {
  out = await build();
}, BUILD_MS);

const key = (id: string) => join(out, 'keys', id);

/** `oapp package` of the app's workflow with the build's throw-away keys, signed by `signers` only. */
async function packageWith(packageId: string, signers: readonly string[]): Promise<string> {
  const path = join(tempDir(), 'packager.oapp');
  const r = await oapp([
    'package',
    join(APP, 'packager.workflow.json'),
    '-o',
    path,
    '--package-id',
    packageId,
    '--resource-dir',
    join(APP, 'resources'),
    '--packager-key',
    key('packager-identity.key'),
    '--recipient',
    key('packager-deployment.pub'),
    ...signers.flatMap((s) => ['--signer', key(`${s}.key`)]),
    '--sign-text',
    'packager 2.0.0',
  ]);
  if (r.code !== 0) throw new Error(r.stderr);
  return path;
}

/** Starts the agent on the built bootstrap, changed by `change`, its API on a free port. */
async function agentOn(change: (r: BootstrapRecord) => void = () => {}) {
  const port = await freePort();
  const bootstrap = bootstrapCopy(out, (r) => {
    r.allowHttpServerAccess[0]!.port = port;
    change(r);
  });
  return { agent: start(AGENT_MAIN, [bootstrap]), port };
}

/** The fatal start-up line of an agent that stopped, and its exit code. */
async function refused(agent: Child): Promise<{ code: number | null; fatal: string }> {
  const code = await agent.exited;
  const fatal =
    agent
      .stderr()
      .split('\n')
      .find((l) => l.includes('"level":"fatal"')) ?? '';
  expect(agent.stdout(), 'no listener').not.toContain('"msg":"listening"');
  return { code, fatal };
}

describe('S162 a packager.oapp that the bootstrap does not pin does not start', () => {
  it(
    'S162 without the version-lock signature (signed by app and packager-app only): exit 1, naming packager-1.x',
    async () => {
      const unlocked = await packageWith('packager', ['app', 'packager-app']);
      const { agent } = await agentOn((r) => (r.remoteConfiguration = unlocked));
      const { code, fatal } = await refused(agent);
      expect(code).toBe(1);
      expect(fatal).toContain('POLICY_REQUIRED_SIGNER_MISSING');
      expect(fatal).toContain('required signer \\"packager-1.x\\"');
    },
    START_MS,
  );

  it(
    'S162 with another package id, though signed by all three: exit 1, POLICY_PACKAGE_ID_MISMATCH',
    async () => {
      const other = await packageWith('packager-2', ['app', 'packager-app', 'packager-1.x']);
      const { agent } = await agentOn((r) => (r.remoteConfiguration = other));
      const { code, fatal } = await refused(agent);
      expect(code).toBe(1);
      expect(fatal).toContain('POLICY_PACKAGE_ID_MISMATCH');
    },
    START_MS,
  );
});

describe('the agent on the built bootstrap', () => {
  let agent: Child | undefined;
  let express: Child | undefined;
  let api = '';
  let reference = '';
  let servers: { id: string; address: string }[] = [];

  beforeAll(async () => {
    const started = await agentOn();
    agent = started.agent;
    express = start(PACKAGER_API_MAIN, [], {
      PORT: '0',
      PACKAGER_RESOURCE_DIRS: readBootstrap(out)[0]!.allowFileAccess[0]!.directoryOrFile,
    });
    const [line, expressLine] = await Promise.all([listening(agent), listening(express)]);
    servers = line['servers'] as typeof servers;
    api = `http://127.0.0.1:${started.port}`;
    reference = `http://127.0.0.1:${expressLine['port'] as number}`;
  }, START_MS);

  afterAll(async () => {
    const [code] = await Promise.all([stop(agent), stop(express)]);
    expect(code, 'the agent drains and exits 0 on SIGTERM').toBe(0);
  });

  /** Status, content type and body bytes of one request to a base URL. */
  async function answer(base: string, path: string, init?: RequestInit) {
    const res = await fetch(`${base}${path}`, init);
    return {
      status: res.status,
      type: res.headers.get('content-type'),
      body: Buffer.from(await res.arrayBuffer()).toString('utf8'),
    };
  }

  it('S163 listens on the loopback: the built bootstrap names no bindAddress', () => {
    expect(servers).toMatchObject([{ id: 'api', address: '127.0.0.1' }]);
  });

  it('answers GET /health 200 as the Express service does', async () => {
    const [a, e] = await Promise.all([answer(api, '/health'), answer(reference, '/health')]);
    expect(a.status).toBe(200);
    expect(a).toEqual(e);
  });

  it(
    'answers POST /workflow-hash as the Express service does, a hash and a problem alike',
    async () => {
      const workflow = JSON.stringify({
        workflows: [
          { name: 'w', steps: [{ stepId: 's', resultsProcessor: { script: "context.setBody('x');" } }] },
        ],
      });
      const post = (body: string, id: string): RequestInit => ({
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-request-id': id },
        body,
      });
      const [a, e] = await Promise.all([
        answer(api, '/workflow-hash', post(workflow, 'packager-app-hash')),
        answer(reference, '/workflow-hash', post(workflow, 'packager-app-hash')),
      ]);
      expect(a.status).toBe(200);
      expect(JSON.parse(a.body)).toMatchObject({
        ok: true,
        hash: expect.stringMatching(/^[0-9a-f]{64}$/) as unknown,
      });
      expect(a).toEqual(e);
      // The same request id gives the same problem bytes on both front-ends.
      const [pa, pe] = await Promise.all([
        answer(api, '/workflow-hash', post('{"workflows": [', 'packager-app-bad')),
        answer(reference, '/workflow-hash', post('{"workflows": [', 'packager-app-bad')),
      ]);
      expect(pa.status).toBe(400);
      expect(pa.type).toMatch(/^application\/problem\+json/);
      expect(pa).toEqual(pe);
    },
    START_MS,
  );
});

it(
  'stops at start-up with a message naming the path when the required community directory is missing',
  async () => {
    const missing = join(tempDir(), 'no-community-resources');
    const { agent } = await agentOn((r) => (r.allowFileAccess[0]!.directoryOrFile = missing));
    // An agent that starts anyway is stopped at once, not waited for.
    const started = listening(agent).then(
      () => 'listening',
      () => 'exited',
    );
    try {
      expect(await started).toBe('exited');
    } finally {
      await stop(agent);
    }
    expect(await agent.exited).toBe(1);
    const fatal = agent
      .stderr()
      .split('\n')
      .find((l) => l.includes('"level":"fatal"'));
    expect(fatal).toContain(missing);
  },
  START_MS,
);
