// The agent serving the real packager library (@org/packager) to a deployment with allowPackagerAccess (ADR 0136,
// issue 26): real servers on port 0, real HTTP, the admin listener's /metrics.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { generateKeyPair, keyToHex } from '@org/envelope-crypto';
import { createPackagerCapability } from '@org/packager';
import type { PackagerCapability } from '@org/workflow-runtime';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createAdminServer, Readiness } from '../src/admin.js';
import { createAgentMetrics } from '../src/metrics.js';
import { startAgent, type RunningAgent } from './agent-helpers.js';
import { echoWorkflow, makeKeys, makeRecord, tempDir, writePackage } from './fixtures.js';

const keys = makeKeys();
const real = createPackagerCapability();

/** The app's wiring: ask for the operation, log what came back (and the body, which must be null). */
const SERVE = `const r = context.packager();
console.log('packager returned ' + JSON.stringify(r) + ' body=' + context.getBody());
context.sendMetric('packager.answer', r.status);`;

const op = (operation: string, method: string, http: object = {}) => ({
  stepId: operation,
  data: { packagerOperation: operation },
  trigger: { http: { server: 'api', method, path: `/${operation}`, ...http } },
  resultsProcessor: { script: SERVE },
});

const workflow = {
  workflows: [
    {
      name: 'packager',
      steps: [
        op('string-encrypt', 'POST', { multiPartUploadByteLimit: 65536 }),
        op('bootstrap-encrypt', 'POST', { multiPartUploadByteLimit: 4194304 }),
        op('key-gen', 'GET'),
        op('health', 'GET'),
      ],
    },
  ],
};

const resources = tempDir();

/** A record granting the packager to a deployment `pk` of the workflow above. */
function packagerRecord(extra: Record<string, unknown> = {}) {
  return makeRecord(keys, writePackage(tempDir(), keys, { workflow }), {
    deploymentId: 'pk',
    allowPackagerAccess: true,
    allowFileAccess: [{ id: 'community', directoryOrFile: resources, READ: true, LIST: true }],
    data: { resourceIds: ['community'] },
    ...extra,
  });
}

const echoRecord = () =>
  makeRecord(keys, writePackage(tempDir(), keys, { workflow: echoWorkflow() }), { deploymentId: 'echo' });

/** The real capability, with every wipe counted, and the run of `failing` operations throwing inside it. */
function counted(failing: readonly string[] = []) {
  const wiped: string[] = [];
  const capability: PackagerCapability = {
    operations: real.operations,
    answer: (err, id) => real.answer(err, id),
    async read(operation, req, dirs, limit) {
      const held = await real.read(operation, req, dirs, limit);
      return {
        operation: held.operation,
        run(id) {
          if (failing.includes(operation)) throw new TypeError(`library bug near ${SECRET_HEX}`);
          return held.run(id);
        },
        wipe() {
          held.wipe();
          wiped.push(operation);
        },
      };
    },
  };
  return { capability, wiped };
}

const packager = generateKeyPair('authenticated');
const alice = generateKeyPair('authenticated');
/** The request's secret: the packager identity's secret key, sent in the multipart `body` part. */
const SECRET_HEX = keyToHex(packager.secretKey);
const PLAINTEXT = 'plaintext-marker-5e1d0c';

function encryptForm(recipients: string[]): FormData {
  const fd = new FormData();
  const body = {
    keys: [
      { id: 'packager', purpose: 'authenticated', type: 'secret', keyHex: SECRET_HEX },
      { id: 'alice', purpose: 'authenticated', type: 'public', keyHex: keyToHex(alice.publicKey!) },
    ],
    encryptionKeys: recipients,
    packagerIdentityPrivateKey: 'packager',
  };
  fd.append('body', JSON.stringify(body));
  fd.append('stream', new Blob([PLAINTEXT], { type: 'application/octet-stream' }), 'stream.bin');
  return fd;
}

let admin: Server;
let adminUrl = '';
const metrics = createAgentMetrics();
const running: RunningAgent[] = [];

beforeAll(async () => {
  admin = createAdminServer({ readiness: new Readiness(), registry: metrics.registry });
  await new Promise<void>((r) => admin.listen(0, '127.0.0.1', r));
  adminUrl = `http://127.0.0.1:${(admin.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((r) => admin.close(r)));
afterEach(async () => {
  for (const a of running.splice(0)) await a.close();
});

async function start(records: object[], capability?: PackagerCapability): Promise<RunningAgent> {
  metrics.registry.resetMetrics();
  const a = await startAgent(keys, records, { metrics: metrics.runtime, packager: capability });
  running.push(a);
  return a;
}

const scriptLogs = (a: RunningAgent) =>
  a.lines.filter((l) => l.includes('"source":"console"')).map((l) => (JSON.parse(l) as { msg: string }).msg);

// An agent starts and its first run starts a sandbox worker: 1–1.5 s on 2 shared cores. Explicit timeouts.
const START = { timeout: 15_000 };

describe('the agent with @org/packager', () => {
  it(
    'serves the library’s answers; the script gets status and code only, getBody() is null',
    START,
    async () => {
      const a = await start([packagerRecord()]);
      const health = await fetch(`${a.url('api', 'pk')}/health`);
      expect(health.status).toBe(200);
      // Other methods on a packager path are the packager's to answer, as on its Express service.
      const head = await fetch(`${a.url('api', 'pk')}/health`, { method: 'HEAD' });
      expect([head.status, await head.text()]).toEqual([200, '']);
      const del = await fetch(`${a.url('api', 'pk')}/health`, { method: 'DELETE' });
      expect(del.status).toBe(405);
      expect(del.headers.get('allow')).toBe('GET, HEAD');
      expect(await del.json()).toMatchObject({ code: 'REQUEST_METHOD_NOT_ALLOWED' });
      const key = await fetch(`${a.url('api', 'pk')}/key-gen?purpose=sign`, {
        headers: { 'x-request-id': 'kg-1' },
      });
      expect(key.status).toBe(200);
      expect(await key.json()).toMatchObject({ purpose: 'sign' });
      const bad = await fetch(`${a.url('api', 'pk')}/key-gen?purpose=nonsense`, {
        headers: { 'x-request-id': 'kg-2' },
      });
      expect(bad.status).toBe(400);
      expect(bad.headers.get('content-type')).toBe('application/problem+json');
      const problem = (await bad.json()) as { code: string; instance: string };
      expect(problem.instance).toBe('urn:example:oapp:request:kg-2');
      // A request refused while it is read (here its query) is answered without a run.
      expect(problem.code).toBe('REQUEST_INVALID_PURPOSE');
      expect(scriptLogs(a)).toEqual([
        'packager returned {"status":200,"code":null} body=null',
        'packager returned {"status":200,"code":null} body=null',
        'packager returned {"status":200,"code":null} body=null',
      ]);
      // The start-up report names the capability and its directory.
      const report = a.lines.map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(report.find((l) => l['msg'] === 'packager capability')).toMatchObject({
        deploymentId: 'pk',
        steps: 4,
        resourceDirs: resources,
      });
    },
  );

  it(
    'S158: the secret key of the body part is in no log line, metric, error or script value; every request is wiped',
    START,
    async () => {
      const c = counted();
      const a = await start([packagerRecord()], c.capability);
      const ok = await fetch(`${a.url('api', 'pk')}/string-encrypt`, {
        method: 'POST',
        body: encryptForm(['alice']),
      });
      const text = await ok.text();
      expect(ok.status).toBe(200);
      expect(text.startsWith('-2/')).toBe(true);
      // Refused while read (two recipients): no run. Refused by the run (a recipient not in keys): the script sees the code.
      const refusedRead = await fetch(`${a.url('api', 'pk')}/string-encrypt`, {
        method: 'POST',
        body: encryptForm(['alice', 'alice']),
      });
      const readProblem = await refusedRead.text();
      expect(refusedRead.status).toBe(422);
      expect(JSON.parse(readProblem)).toMatchObject({ code: 'REQUEST_ONE_RECIPIENT_REQUIRED' });
      const refusedRun = await fetch(`${a.url('api', 'pk')}/string-encrypt`, {
        method: 'POST',
        body: encryptForm(['nobody']),
      });
      const runProblem = await refusedRun.text();
      const { code } = JSON.parse(runProblem) as { code: string };
      expect(refusedRun.status).toBeGreaterThanOrEqual(400);
      expect(scriptLogs(a)).toEqual([
        'packager returned {"status":200,"code":null} body=null',
        `packager returned {"status":${refusedRun.status},"code":"${code}"} body=null`,
      ]);
      expect(c.wiped).toEqual(['string-encrypt', 'string-encrypt']);
      const exposition = await (await fetch(`${adminUrl}/metrics`)).text();
      expect(exposition).toContain('agent_errors_total{code="REQUEST_ONE_RECIPIENT_REQUIRED"} 1');
      expect(exposition).toContain(`agent_errors_total{code="${code}"} 1`);
      const everything = [a.lines.join('\n'), exposition, text, readProblem, runProblem].join('\n');
      for (const secret of [
        SECRET_HEX,
        SECRET_HEX.toUpperCase(),
        Buffer.from(SECRET_HEX, 'hex').toString('base64'),
      ])
        expect(everything).not.toContain(secret);
      expect(a.lines.join('\n')).not.toContain(PLAINTEXT);
    },
  );

  it(
    'S161: an exception inside the capability fails that one request with a coded 500; the agent keeps serving',
    START,
    async () => {
      const c = counted(['bootstrap-encrypt']);
      const a = await start([packagerRecord(), echoRecord()], c.capability);
      const res = await fetch(`${a.url('api', 'pk')}/bootstrap-encrypt`, {
        method: 'POST',
        body: encryptForm(['alice']),
        headers: { 'x-request-id': 'boom-1' },
      });
      const body = await res.text();
      expect(res.status).toBe(500);
      expect(JSON.parse(body)).toMatchObject({
        status: 500,
        code: 'INTERNAL',
        instance: 'urn:example:oapp:request:boom-1',
      });
      expect(body).not.toMatch(/TypeError|library bug| at /);
      const failures = a.lines.filter((l) => l.includes('"msg":"packager request failed"'));
      expect(failures).toHaveLength(1);
      expect(JSON.parse(failures[0]!)).toMatchObject({
        stepId: 'bootstrap-encrypt',
        code: 'INTERNAL',
        reqId: 'boom-1',
      });
      expect(a.lines.join('\n')).not.toMatch(/library bug|TypeError/);
      expect(a.lines.join('\n')).not.toContain(SECRET_HEX);
      expect(c.wiped).toEqual(['bootstrap-encrypt']);
      expect(await (await fetch(`${adminUrl}/metrics`)).text()).toContain(
        'agent_errors_total{code="INTERNAL"} 1',
      );
      // The same deployment and another one answer on.
      expect((await fetch(`${a.url('api', 'pk')}/health`)).status).toBe(200);
      const echo = await fetch(`${a.url('api', 'echo')}/echo`, {
        method: 'POST',
        body: 'hi',
        headers: { 'content-type': 'text/plain' },
      });
      expect(await echo.text()).toBe('hi!');
    },
  );

  it(
    'S163: the packager’s server binds loopback unless the bootstrap names another address',
    START,
    async () => {
      const a = await start([packagerRecord()]);
      expect(a.listening.map((l) => l.address)).toEqual(['127.0.0.1']);
      await a.close();
      running.splice(0);
      const open = await start([
        packagerRecord({ allowHttpServerAccess: [{ id: 'api', port: 18080, bindAddress: '0.0.0.0' }] }),
      ]);
      expect(open.listening.map((l) => l.address)).toEqual(['0.0.0.0']);
    },
  );

  it('refuses at start a step naming an operation the library does not have', START, async () => {
    const unknown = {
      workflows: [
        { name: 'p', steps: [{ ...op('health', 'GET'), data: { packagerOperation: 'workflow-sing' } }] },
      ],
    };
    const record = makeRecord(keys, writePackage(tempDir(), keys, { workflow: unknown }), {
      deploymentId: 'pk',
      allowPackagerAccess: true,
      allowFileAccess: [{ id: 'community', directoryOrFile: resources, READ: true, LIST: true }],
      data: { resourceIds: ['community'] },
    });
    await expect(start([record])).rejects.toMatchObject({
      code: 'AGENT_PACKAGER_INVALID',
      message: expect.stringContaining(
        '"workflow-sing", which is not an operation of the packager (workflow-package,',
      ),
    });
  });
});
