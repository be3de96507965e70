// The packager capability on the runtime (ADR 0136, issue 26): a granted deployment's packager steps are read by the
// capability, run with the request held on the host side, answered with the capability's bytes; start-up rules.
// The capability here is a small real implementation of the interface (the agent's tests use @org/packager).
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DeploymentRecord } from '@org/workflow-compiler';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { compileFileAccess } from '../src/files/access.js';
import type { HeldPackagerRequest, PackagerAnswer, PackagerCapability, PackagerDirs } from '../src/index.js';
import { packagerBindingOf } from '../src/packager/setup.js';
import { closeRuntimes, startRuntime, step, type TestRuntime, type TestDeployment } from './helpers.js';

const SECRET = 'a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9';
const enc = new TextEncoder();
const root = mkdtempSync(join(tmpdir(), 'wr-packager-'));
afterEach(closeRuntimes);
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A directory under the test root, created unless `missing`. */
function dir(name: string, missing = false): string {
  const p = join(root, name);
  if (!missing) mkdirSync(p, { recursive: true });
  return p;
}

type Coded = Error & { code: string; status: number };
const coded = (code: string, status: number, message: string): Coded =>
  Object.assign(new Error(message), { name: 'RequestError', code, status });

function problem(
  status: number,
  code: string,
  detail: string,
  requestId: string,
  extra = {},
): PackagerAnswer {
  const body = {
    type: `urn:test:${code}`,
    title: code,
    status,
    detail,
    instance: `urn:req:${requestId}`,
    code,
  };
  return {
    status,
    headers: { 'content-type': 'application/problem+json', ...extra },
    body: enc.encode(JSON.stringify(body)),
  };
}

function internal(requestId: string, failure: unknown): PackagerAnswer {
  const body = {
    type: 'about:blank',
    title: 'Internal Server Error',
    status: 500,
    instance: requestId,
    code: 'INTERNAL',
  };
  return {
    status: 500,
    headers: { 'content-type': 'application/problem+json' },
    body: enc.encode(JSON.stringify(body)),
    failure,
  };
}

interface TestHeld extends HeldPackagerRequest {
  readonly buffers: Uint8Array[];
  wiped: boolean;
  runs: number;
}

/**
 * Operations: `digest` (a JSON body `{"key"}` → its SHA-256; the key is the request's secret), `key-gen` (answers a
 * fresh key), `boom` (an internal failure, answered with the generic 500), `reject` (a run that rejects, against the
 * contract), `explode` (a read that throws an uncoded error). `Accept: text/html` is refused first (406).
 */
function testPackager(options: { answerThrows?: boolean } = {}) {
  const reads: { operation: string; dirs: PackagerDirs; limit: number | undefined }[] = [];
  const held: TestHeld[] = [];
  const capability: PackagerCapability = {
    operations: ['digest', 'key-gen', 'boom', 'reject', 'explode'],
    async read(operation, req, dirs, limit) {
      reads.push({ operation, dirs, limit });
      if (req.headers.accept === 'text/html')
        throw Object.assign(coded('REQUEST_NOT_ACCEPTABLE', 406, 'this endpoint answers application/json'), {
          headers: { 'accept-post': 'application/json' },
        });
      if (operation === 'explode') throw new TypeError(`the reader broke on ${SECRET}`);
      if (operation === 'digest' && req.method !== 'POST')
        throw Object.assign(coded('REQUEST_METHOD_NOT_ALLOWED', 405, 'this path takes POST'), {
          headers: { allow: 'POST' },
        });
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const body = Buffer.concat(chunks);
      const h: TestHeld = {
        operation,
        buffers: [body, ...chunks],
        wiped: false,
        runs: 0,
        run(requestId) {
          h.runs++;
          if (operation === 'boom')
            return Promise.resolve(capability.answer(new Error(`kaboom ${SECRET}`), requestId));
          if (operation === 'reject') return Promise.reject(new Error(`rejected ${SECRET}`));
          if (operation === 'key-gen')
            return Promise.resolve({
              status: 200,
              headers: { 'content-type': 'application/json', 'cache-control': 'no-store' },
              body: enc.encode('{"keyHex":"fresh"}'),
            });
          let key: unknown;
          try {
            key = (JSON.parse(Buffer.from(body).toString('utf8')) as { key?: unknown }).key;
          } catch {
            key = undefined;
          }
          if (typeof key !== 'string')
            return Promise.resolve(problem(400, 'REQUEST_BODY_INVALID', 'key must be a string', requestId));
          const sha256 = createHash('sha256').update(key).digest('hex');
          return Promise.resolve({
            status: 201,
            headers: { 'content-type': 'application/json', 'x-packager': operation },
            body: enc.encode(JSON.stringify({ sha256 })),
          });
        },
        wipe() {
          for (const b of h.buffers) b.fill(0);
          h.wiped = true;
        },
      };
      held.push(h);
      return h;
    },
    checkCallerTokens(records, source) {
      // As @org/packager: the message names the source and line, never the text.
      records.split('\n').forEach((r, i) => {
        if (!r.startsWith('sha256:'))
          throw coded('REQUEST_TOKEN_CONFIG_INVALID', 500, `${source} line ${i + 1}: not a hash record`);
      });
    },
    answer(err, requestId) {
      if (options.answerThrows) throw new Error(`answer broke on ${SECRET}`);
      const e = err as Partial<Coded> & { headers?: Record<string, string> };
      if (typeof e.code === 'string' && typeof e.status === 'number')
        return problem(e.status, e.code, String(e.message), requestId, e.headers);
      return internal(requestId, err);
    },
  };
  return { capability, reads, held };
}

/** Logs what the script sees of the run; `then` runs after the call. */
const wiring = (then = '') =>
  `const r = context.packager();
   console.log('returned ' + JSON.stringify(r) + ' body=' + context.getBody() + ' stream=' + context.getStream().readAll().length);
   context.sendMetric('packager.status', r.status);
   ${then}`;

const packagerStep = (stepId: string, operation: string, script = wiring(), http: object = {}) => ({
  ...step(stepId, script, { http: { server: 'api', path: `/${stepId}`, method: 'POST', ...http } }),
  data: { packagerOperation: operation },
});

function granted(id: string, steps: object[], over: Record<string, unknown> = {}): TestDeployment {
  return {
    id,
    workflow: { workflows: [{ name: 'w', steps }] },
    record: {
      allowHttpServerAccess: [{ id: 'api', port: 1 }],
      allowPackagerAccess: true,
      allowFileAccess: [
        { id: 'res', directoryOrFile: dir('community'), READ: true, LIST: true },
        { id: 'local', directoryOrFile: dir('local', true), READ: true, LIST: true },
        { id: 'sources', directoryOrFile: dir('sources'), READ: true, LIST: true },
      ],
      data: { resourceIds: ['res', 'local'], workflowSourceIds: ['sources'] },
      ...over,
    },
  };
}

async function post(
  t: TestRuntime,
  id: string,
  path: string,
  body: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; text: string }> {
  const res = await fetch(`http://127.0.0.1:${t.port(id, 'api')}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

const everything = (t: TestRuntime, ...more: unknown[]) => JSON.stringify([t.lines(), ...more]);

describe('a packager step of a granted deployment', () => {
  // The file's first run starts a sandbox worker (up to 1 s on 2 shared cores): an explicit timeout.
  it(
    'S158: the key in the request body never reaches a log line, metric, error or the script; the request is wiped',
    { timeout: 10_000 },
    async () => {
      const p = testPackager();
      const t = await startRuntime(
        [
          granted('pk', [
            packagerStep('digest', 'digest'),
            packagerStep(
              'after',
              'digest',
              wiring('throw new Error("late " + JSON.stringify(r) + context.getBody());'),
            ),
          ]),
        ],
        { packager: p.capability },
      );
      const res = await post(t, 'pk', '/digest', JSON.stringify({ key: SECRET }), {
        'x-request-id': 'req-158',
      });
      expect(res.status).toBe(201);
      expect(res.headers.get('x-packager')).toBe('digest');
      expect(res.headers.get('x-request-id')).toBe('req-158');
      expect(JSON.parse(res.text)).toEqual({ sha256: createHash('sha256').update(SECRET).digest('hex') });
      // The script got the status and no code, and nothing of the request: no body, an empty stream.
      expect(t.logs('pk')).toEqual(['returned {"status":201,"code":null} body=null stream=0']);
      expect(t.metrics('pk')).toEqual(['packager.status']);
      const errored = await post(t, 'pk', '/after', JSON.stringify({ key: SECRET }));
      expect(errored.status).toBe(500);
      expect(JSON.parse(errored.text)).toMatchObject({ code: 'AGENT_STEP_FAILED' });
      expect(everything(t, res.text, errored.text)).not.toContain(SECRET);
      expect(t.lines().some((l) => l['msg'] === 'step errored' && String(l['errors']).includes('late'))).toBe(
        true,
      );
      // Each held request ran once and was wiped: every buffer it read is zeroes.
      expect(p.held.map((h) => [h.runs, h.wiped])).toEqual([
        [1, true],
        [1, true],
      ]);
      for (const h of p.held) for (const b of h.buffers) expect(b.every((x) => x === 0)).toBe(true);
      // The capability got the deployment's directories: the missing optional one skipped.
      expect(p.reads[0]!.dirs).toEqual({
        resourceDirs: [join(root, 'community')],
        workflowSourceDirs: [join(root, 'sources')],
      });
    },
  );

  it('answers an error answer as it is and hands the script its problem code', async () => {
    const p = testPackager();
    const t = await startRuntime([granted('pk', [packagerStep('digest', 'digest')])], {
      packager: p.capability,
    });
    const res = await post(t, 'pk', '/digest', '{"key": 5}', { 'x-request-id': 'req-400' });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    expect(JSON.parse(res.text)).toMatchObject({ code: 'REQUEST_BODY_INVALID', instance: 'urn:req:req-400' });
    expect(t.logs('pk')).toEqual([
      'returned {"status":400,"code":"REQUEST_BODY_INVALID"} body=null stream=0',
    ]);
    const line = t.lines().find((l) => l['msg'] === 'request');
    expect(line).toMatchObject({ status: 400, code: 'REQUEST_BODY_INVALID', stepId: 'digest' });
  });

  it('answers a read error with the capability’s answer for it; no run starts, nothing is held', async () => {
    const p = testPackager();
    const t = await startRuntime([granted('pk', [packagerStep('digest', 'digest')])], {
      packager: p.capability,
    });
    const res = await post(t, 'pk', '/digest', JSON.stringify({ key: SECRET }), {
      accept: 'text/html',
      'x-request-id': 'req-406',
    });
    expect(res.status).toBe(406);
    expect(res.headers.get('accept-post')).toBe('application/json');
    expect(JSON.parse(res.text)).toMatchObject({
      code: 'REQUEST_NOT_ACCEPTABLE',
      instance: 'urn:req:req-406',
    });
    expect(p.held).toEqual([]);
    expect(t.logs('pk')).toEqual([]);
    // The unread body was drained: the connection stays usable.
    const next = await post(t, 'pk', '/digest', JSON.stringify({ key: 'k' }));
    expect(next.status).toBe(201);
  });

  it('passes the step’s multiPartUploadByteLimit to the capability and reads Expect: 100-continue requests itself', async () => {
    const p = testPackager();
    const t = await startRuntime(
      [granted('pk', [packagerStep('digest', 'digest', wiring(), { multiPartUploadByteLimit: 4096 })])],
      { packager: p.capability },
    );
    const body = JSON.stringify({ key: 'k' });
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest({
        port: t.port('pk', 'api'),
        path: '/digest',
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'content-length': body.length,
          expect: '100-continue',
        },
      });
      req.on('continue', () => req.end(body));
      req.on('response', (r) => {
        r.resume();
        resolve(r.statusCode ?? 0);
      });
      req.on('error', reject);
    });
    expect(status).toBe(201);
    expect(p.reads.map((r) => r.limit)).toEqual([4096]);
  });

  it('S161: a failure inside the capability fails that one request with a coded 500, logged by code only', async () => {
    const p = testPackager();
    const other = {
      id: 'other',
      workflow: {
        workflows: [
          {
            name: 'w',
            steps: [step('hi', "context.setBody('hi');", { http: { server: 'web', path: '/hi' } })],
          },
        ],
      },
      record: { allowHttpServerAccess: [{ id: 'web', port: 1 }] },
    };
    const t = await startRuntime(
      [
        granted('pk', [
          packagerStep('boom', 'boom'),
          packagerStep('reject', 'reject'),
          packagerStep('explode', 'explode'),
          packagerStep('digest', 'digest'),
        ]),
        other,
      ],
      { packager: p.capability },
    );
    const answers = [];
    for (const path of ['/boom', '/reject', '/explode']) {
      const res = await post(t, 'pk', path, JSON.stringify({ key: SECRET }));
      expect(res.status).toBe(500);
      const body = JSON.parse(res.text) as Record<string, unknown>;
      expect(body).toMatchObject({ status: 500, code: 'INTERNAL' });
      expect(res.text).not.toMatch(/kaboom|rejected|broke| at /);
      answers.push(res.text);
    }
    const failures = t.lines().filter((l) => l['msg'] === 'packager request failed');
    expect(failures.map((l) => [l['stepId'], l['code']])).toEqual([
      ['boom', 'INTERNAL'],
      ['reject', 'INTERNAL'],
      ['explode', 'INTERNAL'],
    ]);
    expect(everything(t, answers)).not.toMatch(/kaboom|rejected|broke/);
    expect(everything(t, answers)).not.toContain(SECRET);
    // The held requests of the failed runs were wiped; the deployment and the other one keep serving.
    expect(p.held.every((h) => h.wiped)).toBe(true);
    expect((await post(t, 'pk', '/digest', JSON.stringify({ key: 'k' }))).status).toBe(201);
    const hi = await fetch(`http://127.0.0.1:${t.port('other', 'web')}/hi`);
    expect(await hi.text()).toBe('hi');
  });

  it('S161: a capability whose answer() throws still fails the request with the generic 500', async () => {
    const p = testPackager({ answerThrows: true });
    const t = await startRuntime([granted('pk', [packagerStep('explode', 'explode')])], {
      packager: p.capability,
    });
    const res = await post(t, 'pk', '/explode', '{}', { 'x-request-id': 'req-161' });
    expect(res.status).toBe(500);
    expect(JSON.parse(res.text)).toEqual({
      type: 'about:blank',
      title: 'Internal Server Error',
      status: 500,
      instance: 'urn:example:oapp:request:req-161',
      code: 'INTERNAL',
    });
    expect(everything(t)).not.toContain(SECRET);
  });

  it('hands a request of another method on a packager path to the capability, which answers it', async () => {
    const p = testPackager();
    const plain = step('plain', "context.setBody('plain');", {
      http: { server: 'api', path: '/plain', method: 'POST' },
    });
    const t = await startRuntime([granted('pk', [packagerStep('digest', 'digest'), plain])], {
      packager: p.capability,
    });
    const res = await fetch(`http://127.0.0.1:${t.port('pk', 'api')}/digest`);
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
    expect(await res.json()).toMatchObject({ code: 'REQUEST_METHOD_NOT_ALLOWED' });
    // An ordinary step's path keeps the agent's own 405.
    const other = await fetch(`http://127.0.0.1:${t.port('pk', 'api')}/plain`);
    expect(other.status).toBe(405);
    expect(await other.json()).toMatchObject({ code: 'AGENT_METHOD_NOT_ALLOWED' });
  });

  it('keeps today’s behaviour for a step without the operation mark; context.packager() there is refused', async () => {
    const p = testPackager();
    const plain = step(
      'plain',
      `try { context.packager(); } catch (e) { console.log(e.code); }
       context.setBody('got ' + context.getBody());`,
      { http: { server: 'api', path: '/plain', method: 'POST' } },
    );
    const t = await startRuntime([granted('pk', [plain])], { packager: p.capability });
    const res = await post(t, 'pk', '/plain', '{"a":1}');
    expect(res).toMatchObject({ status: 200, text: 'got {"a":1}' });
    expect(t.logs('pk')).toEqual(['ENGINE_BAD_ARGUMENT']);
    expect(p.reads).toEqual([]);
  });

  it('serves a deferLoading deployment’s packager steps (the operation is known before the engine exists)', async () => {
    const p = testPackager();
    const t = await startRuntime(
      [granted('pk', [packagerStep('digest', 'digest')], { deferLoading: true })],
      {
        packager: p.capability,
      },
    );
    expect((await post(t, 'pk', '/digest', JSON.stringify({ key: 'k' }))).status).toBe(201);
  });
});

describe('S157: a deployment without allowPackagerAccess', () => {
  it('S157: context.packager() throws a coded script error, nothing is produced and no resource directory is looked at', async () => {
    const p = testPackager();
    // The resource directory does not exist: granted, the deployment would not even start.
    const d = granted('plain', [
      packagerStep(
        'digest',
        'digest',
        `try { context.packager(); } catch (e) { console.log(e.code + ' ' + e.message); throw e; }`,
      ),
    ]);
    const record: Record<string, unknown> = { ...d.record, allowPackagerAccess: false };
    (record['allowFileAccess'] as { directoryOrFile: string }[])[0]!.directoryOrFile = dir('never', true);
    const t = await startRuntime([{ ...d, record }], { packager: p.capability });
    const res = await post(t, 'plain', '/digest', JSON.stringify({ key: SECRET }));
    expect(res.status).toBe(500);
    expect(JSON.parse(res.text)).toMatchObject({ code: 'AGENT_STEP_FAILED' });
    expect(t.logs('plain')).toEqual([
      'ENGINE_NOT_PERMITTED ENGINE_NOT_PERMITTED: packager: this deployment has no packager access',
    ]);
    expect(p.reads).toEqual([]);
    expect(p.held).toEqual([]);
    expect(t.lines().some((l) => String(l['msg']).startsWith('packager'))).toBe(false);
  });
});

describe('start-up rules of a granted deployment', () => {
  it('reports the deployment’s packager capability and directories, skipping a missing optional one', async () => {
    const p = testPackager();
    const t = await startRuntime([granted('pk', [packagerStep('digest', 'digest'), step('x', '')])], {
      packager: p.capability,
    });
    const lines = t.lines();
    expect(lines.find((l) => l['msg'] === 'packager directory missing; skipped')).toMatchObject({
      deploymentId: 'pk',
      id: 'local',
      dir: join(root, 'local'),
    });
    expect(lines.find((l) => l['msg'] === 'packager capability')).toMatchObject({
      deploymentId: 'pk',
      steps: 1,
      resourceDirs: join(root, 'community'),
      workflowSourceDirs: join(root, 'sources'),
    });
    expect(lines.find((l) => l['msg'] === 'deployment loaded')).toMatchObject({
      deploymentId: 'pk',
      packager: true,
    });
  });

  it('refuses a granted deployment on a runtime without a capability (AGENT_PACKAGER_UNAVAILABLE)', async () => {
    await expect(startRuntime([granted('pk', [packagerStep('digest', 'digest')])])).rejects.toMatchObject({
      code: 'AGENT_PACKAGER_UNAVAILABLE',
      message: expect.stringContaining('"pk"'),
    });
  });

  it.each([
    ['an unknown operation', 'workflow-sing', '"workflow-sing"'],
    ['an operation that is not a string', 7, 'a number'],
  ])('refuses %s with AGENT_PACKAGER_INVALID naming the step', async (_what, op, named) => {
    const p = testPackager();
    const s = { ...packagerStep('digest', 'digest'), data: { packagerOperation: op } };
    await expect(startRuntime([granted('pk', [s])], { packager: p.capability })).rejects.toMatchObject({
      code: 'AGENT_PACKAGER_INVALID',
      message: expect.stringMatching(new RegExp(`step "digest" declares data.packagerOperation ${named}`)),
    });
  });

  it('stops when the first resource directory is missing, naming its path (AGENT_PACKAGER_RESOURCES_MISSING)', async () => {
    const p = testPackager();
    const d = granted('pk', [packagerStep('digest', 'digest')]);
    (d.record!['data'] as { resourceIds: string[] }).resourceIds = ['local', 'res'];
    await expect(startRuntime([d], { packager: p.capability })).rejects.toMatchObject({
      code: 'AGENT_PACKAGER_RESOURCES_MISSING',
      message: expect.stringContaining(join(root, 'local')),
    });
  });

  it('refuses a directory entry that is a file or has patterns (AGENT_PACKAGER_INVALID naming the id)', async () => {
    const p = testPackager();
    const file = join(dir('files'), 'one.json');
    writeFileSync(file, '{}');
    const asFile = granted('pk', [packagerStep('digest', 'digest')]);
    (asFile.record!['allowFileAccess'] as { directoryOrFile: string }[])[2]!.directoryOrFile = file;
    await expect(startRuntime([asFile], { packager: p.capability })).rejects.toMatchObject({
      code: 'AGENT_PACKAGER_INVALID',
      message: expect.stringContaining('"sources", which is a file'),
    });
    const withPatterns = granted('pk', [packagerStep('digest', 'digest')]);
    (withPatterns.record!['allowFileAccess'] as { patterns?: string[] }[])[0]!.patterns = ['.*\\.js'];
    await expect(startRuntime([withPatterns], { packager: p.capability })).rejects.toMatchObject({
      code: 'AGENT_PACKAGER_INVALID',
      message: expect.stringContaining('"res", whose allowFileAccess entry has patterns'),
    });
  });

  it.each([
    [{ resourceIds: ['nowhere'] }, '"nowhere", which is not an allowFileAccess entry'],
    [{ resourceIds: ['write-only'] }, '"write-only", whose allowFileAccess entry must grant READ and LIST'],
    [{ resourceIds: [] }, 'at least one'],
    [{}, 'data.resourceIds must be an array'],
    [{ resourceIds: ['res'], workflowSourceIds: 'res' }, 'data.workflowSourceIds must be an array'],
  ])(
    'checks the directory lists again at deployment start (%j), for records no one validated',
    (data, why) => {
      const record = {
        deploymentId: 'pk',
        remoteConfiguration: 'unused.oapp',
        allowPackagerAccess: true,
        allowFileAccess: [
          { id: 'res', directoryOrFile: dir('community'), READ: true, LIST: true },
          { id: 'write-only', directoryOrFile: dir('community'), WRITE: true },
        ],
        data,
      } as DeploymentRecord;
      const files = compileFileAccess(record, { baseDir: root });
      const out = { info: () => undefined } as unknown as Parameters<typeof packagerBindingOf>[4];
      expect(() => packagerBindingOf(record, [], files, testPackager().capability, out)).toThrowCode(
        'AgentError',
        'AGENT_PACKAGER_INVALID',
      );
      try {
        packagerBindingOf(record, [], files, testPackager().capability, out);
      } catch (e) {
        expect((e as Error).message).toContain(why);
      }
    },
  );

  const RECORD_A = `sha256:${'a'.repeat(64)} package ci`;
  const RECORD_B = `sha256:${'b'.repeat(64)} key-gen keys`;

  it('passes data.callerTokenHashes to every read, one record a line, and reports only how many (ADR 0140)', async () => {
    const p = testPackager();
    const d = granted('pk', [packagerStep('digest', 'digest')]);
    (d.record!['data'] as Record<string, unknown>)['callerTokenHashes'] = [RECORD_A, RECORD_B];
    const t = await startRuntime([d], { packager: p.capability });
    expect((await post(t, 'pk', '/digest', JSON.stringify({ key: 'k' }))).status).toBe(201);
    expect(p.reads[0]!.dirs.callerTokenHashes).toBe(`${RECORD_A}\n${RECORD_B}`);
    expect(t.lines().find((l) => l['msg'] === 'packager capability')).toMatchObject({ callerTokens: 2 });
    expect(JSON.stringify(t.lines())).not.toContain('a'.repeat(64));
  });

  it.each([
    ['not an array', 'sha256:x', 'must be a non-empty array'],
    ['an empty array', [], 'must be a non-empty array'],
    ['two records in one entry', [`${'x'};${'y'}`], 'one per entry'],
    [
      'a plain token',
      ['sha256:' + 'a'.repeat(64) + ' package ci', 'oappt_plain-token-value'],
      'data.callerTokenHashes line 2: not a hash record',
    ],
  ])(
    'S175 refuses data.callerTokenHashes that is %s (AGENT_PACKAGER_INVALID, without the value)',
    async (_what, value, why) => {
      const p = testPackager();
      const d = granted('pk', [packagerStep('digest', 'digest')]);
      (d.record!['data'] as Record<string, unknown>)['callerTokenHashes'] = value;
      const failure = startRuntime([d], { packager: p.capability });
      await expect(failure).rejects.toMatchObject({
        code: 'AGENT_PACKAGER_INVALID',
        message: expect.stringContaining(why),
      });
      await failure.catch((e: unknown) =>
        expect(String((e as Error).message)).not.toContain('plain-token-value'),
      );
    },
  );

  it('refuses data.callerTokenHashes for a capability that cannot check tokens', async () => {
    const p = testPackager();
    const { checkCallerTokens: _dropped, ...without } = p.capability;
    const d = granted('pk', [packagerStep('digest', 'digest')]);
    (d.record!['data'] as Record<string, unknown>)['callerTokenHashes'] = [RECORD_A];
    await expect(startRuntime([d], { packager: without })).rejects.toMatchObject({
      code: 'AGENT_PACKAGER_INVALID',
      message: expect.stringContaining('cannot check caller tokens'),
    });
  });
});
