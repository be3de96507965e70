import { mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { request, type IncomingHttpHeaders } from 'node:http';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { validateBootstrap, type DeploymentRecord } from '@org/workflow-compiler';
import { Redactor } from '@org/workflow-engine';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  AgentError,
  closeAll,
  createOutput,
  createRuntime,
  createStringDecryptor,
  DEFAULT_LIMITS,
  DEFAULT_TIMEOUTS,
  hostPolicyOf,
  listenAll,
  type Runtime,
} from '../../src/index.js';
import { buildZip, type ZipEntrySpec } from '../zip-builder.js';

// createRuntime with a server serving a packaged asset zip; real sockets on port 0, raw request targets.

const dir = mkdtempSync(join(tmpdir(), 'assets-serve-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const started: Runtime[] = [];
afterEach(async () => {
  for (const r of started.splice(0)) {
    await r.stop(500);
    await closeAll(r, 0);
  }
});

const BIG = Buffer.concat([randomBytes(200 * 1024), Buffer.alloc(200 * 1024, 'a')]);
const SITE: ZipEntrySpec[] = [
  { name: 'index.html', data: '<h1>home</h1>' },
  { name: 'css/site.css', data: 'body { color: red }', method: 0 },
  { name: 'docs/', method: 0 },
  { name: 'docs/index.html', data: '<h1>docs</h1>', descriptor: true },
  { name: 'big.bin', data: BIG },
  { name: 'data.json', data: '{"a":1}' },
];
writeFileSync(join(dir, 'secret.txt'), 'outside the zip');

const workflow = (steps: object[]) => ({ workflows: [{ name: 'w', steps }] });
const fileStep = (stepId: string, path: string, extra: object = {}) => ({
  stepId,
  type: 'httpFile',
  trigger: { http: { server: 'web', path, ...extra } },
});
const STEPS = [
  fileStep('static', '/static/.*', { method: 'GET' }),
  fileStep('root', '/[a-z]+\\.json'),
  {
    stepId: 'hello',
    trigger: { http: { server: 'web', method: 'GET', path: '/hello' } },
    resultsProcessor: { script: "context.setBody('hi')" },
  },
];

function recordOf(zipFile: string, over: object = {}): DeploymentRecord {
  return validateBootstrap(
    JSON.stringify([
      {
        deploymentId: 'd1',
        remoteConfiguration: 'unused.oapp',
        allowHttpServerAccess: [
          { id: 'web', port: 9, serveFromPackagedAsset: { packagedAssetFileId: 'site' } },
        ],
        allowFileAccess: [{ id: 'site', directoryOrFile: zipFile, READ: true }],
        ...over,
      },
    ]),
  )[0] as DeploymentRecord;
}

let zipN = 0;
async function start(entries = SITE, steps: object[] = STEPS, over: object = {}) {
  const name = `site${zipN++}.zip`;
  writeFileSync(join(dir, name), buildZip(entries));
  const lines: string[] = [];
  const redactor = new Redactor();
  const record = recordOf(name, over);
  const runtime = await createRuntime({
    deployments: [{ record, workflow: workflow(steps), policy: hostPolicyOf(record, []), source: 'test' }],
    redactor,
    output: createOutput((l) => lines.push(l), redactor),
    decryptor: createStringDecryptor([]),
    limits: DEFAULT_LIMITS,
    timeouts: DEFAULT_TIMEOUTS,
    ports: { web: 0 },
    bindAddress: '127.0.0.1',
    fileBaseDir: dir,
  });
  started.push(runtime);
  const [listening] = await listenAll(runtime);
  return { runtime, lines, port: listening!.port, zipPath: join(dir, name) };
}

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  error?: string;
}

/** One request with the target exactly as given (fetch would normalise `/../`). */
function send(
  port: number,
  path: string,
  method = 'GET',
  headers: Record<string, string> = {},
): Promise<Answer> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path, method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      const done = (error?: string) =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), error });
      res.on('end', () => done());
      res.on('error', (e) => done(e.message));
      res.on('aborted', () => done('aborted'));
    });
    req.on('error', (e) => resolve({ status: 0, headers: {}, body: Buffer.alloc(0), error: e.message }));
    req.end();
  });
}

describe('httpFile steps on a server with serveFromPackagedAsset', () => {
  let port: number;
  let runtime: Runtime;
  beforeAll(async () => {
    ({ port, runtime } = await start());
    started.splice(started.indexOf(runtime), 1);
  });
  afterAll(async () => {
    await runtime.stop(500);
    await closeAll(runtime, 0);
  });

  it('serves an entry with its type, length, ETag and no-cache', async () => {
    const a = await send(port, '/static/css/site.css');
    expect(a.status).toBe(200);
    expect(a.body.toString()).toBe('body { color: red }');
    expect(a.headers).toMatchObject({
      'content-type': 'text/css; charset=utf-8',
      'content-length': '19',
      'cache-control': 'no-cache',
      'x-content-type-options': 'nosniff',
    });
    expect(a.headers.etag).toMatch(/^"[0-9a-f]{8}-13"$/);
  });

  it('maps the path after the trigger prefix; a directory serves its index.html', async () => {
    expect((await send(port, '/static/')).body.toString()).toBe('<h1>home</h1>');
    expect((await send(port, '/static/docs/')).body.toString()).toBe('<h1>docs</h1>');
    expect((await send(port, '/static/index.html?v=2')).body.toString()).toBe('<h1>home</h1>');
    const json = await send(port, '/data.json');
    expect([json.status, json.headers['content-type'], json.body.toString()]).toEqual([
      200,
      'application/json; charset=utf-8',
      '{"a":1}',
    ]);
  });

  it('streams a large deflated entry byte for byte', async () => {
    const a = await send(port, '/static/big.bin');
    expect(a.status).toBe(200);
    expect(a.headers['content-length']).toBe(String(BIG.length));
    expect(a.body.equals(BIG)).toBe(true);
  });

  it('answers HEAD with the headers and no body (a GET trigger takes HEAD)', async () => {
    const a = await send(port, '/static/big.bin', 'HEAD');
    expect([a.status, a.headers['content-length'], a.body.length]).toEqual([200, String(BIG.length), 0]);
  });

  it('answers If-None-Match with 304 for the current ETag (weak, list and * forms)', async () => {
    const { headers } = await send(port, '/static/index.html');
    const etag = headers.etag!;
    for (const inm of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const a = await send(port, '/static/index.html', 'GET', { 'if-none-match': inm });
      expect([inm, a.status, a.body.length, a.headers.etag]).toEqual([inm, 304, 0, etag]);
    }
    expect((await send(port, '/static/index.html', 'GET', { 'if-none-match': '"other"' })).status).toBe(200);
    expect((await send(port, '/static/index.html', 'HEAD', { 'if-none-match': etag })).status).toBe(304);
  });

  it('answers a missing entry with 404 AGENT_ASSET_NOT_FOUND, and a directory without its slash too', async () => {
    for (const path of ['/static/nope.txt', '/static/docs', '/static/css/']) {
      const a = await send(port, path);
      expect([path, a.status, a.headers['content-type'], JSON.parse(a.body.toString()).code]).toEqual([
        path,
        404,
        'application/problem+json',
        'AGENT_ASSET_NOT_FOUND',
      ]);
    }
  });

  it('answers other methods with 405 and Allow', async () => {
    const post = await send(port, '/static/index.html', 'POST');
    expect([post.status, post.headers.allow]).toEqual([405, 'GET, HEAD']);
    const del = await send(port, '/data.json', 'DELETE');
    expect([del.status, del.headers.allow, JSON.parse(del.body.toString()).code]).toEqual([
      405,
      'GET, HEAD',
      'AGENT_METHOD_NOT_ALLOWED',
    ]);
  });

  it('S138 answers traversal paths with 400 or 404 and never serves a byte from outside the zip', async () => {
    const paths = [
      '/static/../x',
      '/static/../secret.txt',
      '/static/%2e%2e/secret.txt',
      '/static/%2E%2E%2Fsecret.txt',
      '/static//etc/passwd',
      '/static/\\..\\secret.txt',
      '/static/..%5csecret.txt',
      '/static/%00',
      '/static/docs/../index.html',
      '/../x',
      '/%2e%2e/x',
      '//etc/passwd',
      '/\\..\\x',
    ];
    for (const path of paths) {
      const a = await send(port, path);
      expect([path, [400, 404].includes(a.status)]).toEqual([path, true]);
      expect(a.body.toString()).not.toContain('outside the zip');
      expect(a.body.toString()).not.toContain('root:');
    }
    const bad = await send(port, '/static/%2e%2e/secret.txt');
    expect(JSON.parse(bad.body.toString()).code).toBe('AGENT_ASSET_PATH_INVALID');
  });

  it('runs scripted steps on the same server as before', async () => {
    expect((await send(port, '/hello')).body.toString()).toBe('hi');
  });

  it('counts the answers as HTTP runs of the httpFile step', () => {
    const c = runtime.stepCounters().find((x) => x.stepId === 'static');
    expect(c).toMatchObject({ deploymentId: 'd1', errors: 0, running: 0 });
    expect(c!.httpRuns).toBeGreaterThan(5);
  });
});

describe('start-up of a server with serveFromPackagedAsset', () => {
  it('serves the asset named by servePackagedAsset as a plain file id, as reference bootstraps write it (issue 28)', async () => {
    const { port } = await start(SITE, STEPS, {
      allowHttpServerAccess: [{ id: 'web', port: 9, servePackagedAsset: 'site' }],
    });
    const a = await send(port, '/static/css/site.css');
    expect([a.status, a.body.toString()]).toEqual([200, 'body { color: red }']);
  });

  it('stops with AGENT_ASSET_INVALID naming the file when the zip is bad', async () => {
    const err = await start([{ name: '../evil.txt', data: 'x' }]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AgentError);
    expect(err).toMatchObject({ code: 'AGENT_ASSET_INVALID' });
    expect((err as Error).message).toMatch(
      /^deployment "d1", server "web", zip ".*site\d+\.zip" is refused: /,
    );
  });

  it('stops with AGENT_ASSET_UNREADABLE when the allowFileAccess entry does not grant READ', async () => {
    const err = await start(SITE, STEPS, {
      allowFileAccess: [{ id: 'site', directoryOrFile: 'x.zip', READ: false }],
    }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'AGENT_ASSET_UNREADABLE' });
  });

  it('refuses an httpFile step on a server without a packaged asset, or with another method', async () => {
    const plain = { allowHttpServerAccess: [{ id: 'web', port: 9 }] };
    await expect(start(SITE, STEPS, plain)).toThrowCode(AgentError, 'AGENT_TRIGGER_INVALID');
    await expect(start(SITE, [fileStep('up', '/up/.*', { method: 'POST' })])).toThrowCode(
      AgentError,
      'AGENT_TRIGGER_INVALID',
    );
  });

  it('reports neither serveFromPackagedAsset nor httpFile as unsupported', async () => {
    const { lines } = await start();
    const warnings = lines.filter((l) => l.includes('unsupported feature'));
    expect(warnings.filter((l) => /serveFromPackagedAsset|httpFile/.test(l))).toEqual([]);
  });
});

describe('clients that go away', () => {
  it('a response cut by the client is neither logged nor counted as an error', async () => {
    const { port, lines, runtime } = await start();
    await new Promise<void>((resolve) => {
      const req = request({ host: '127.0.0.1', port, path: '/static/big.bin', agent: false }, (res) => {
        res.once('data', () => {
          req.destroy();
          resolve();
        });
      });
      req.end();
    });
    await expect.poll(() => runtime.stepCounters().find((c) => c.stepId === 'static')?.running).toBe(0);
    expect(runtime.stepCounters().find((c) => c.stepId === 'static')).toMatchObject({
      httpRuns: 1,
      errors: 0,
    });
    expect(lines.filter((l) => l.includes('asset read failed'))).toEqual([]);
    expect((await send(port, '/static/index.html')).status).toBe(200);
  });
});

describe('reads that fail after start-up', () => {
  it('a zip truncated under the server: 500 before the headers, a cut connection after them; the server goes on', async () => {
    const { port, lines, zipPath } = await start();
    truncateSync(zipPath, 200 * 1024);
    const small = await send(port, '/data.json');
    expect([small.status, JSON.parse(small.body.toString()).code]).toEqual([500, 'AGENT_STEP_FAILED']);
    const big = await send(port, '/static/big.bin');
    expect(big.status === 0 || big.error !== undefined || big.body.length < BIG.length).toBe(true);
    expect(lines.filter((l) => l.includes('"msg":"asset read failed"')).length).toBe(2);
    expect((await send(port, '/hello')).body.toString()).toBe('hi');
  });
});
