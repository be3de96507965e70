import { request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newCallerToken, parseTokenHashes, tokenHash } from '@org/packager';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.js';
import { ConfigError, DEFAULT_LIMITS, DEFAULT_TIMEOUTS, isLoopback, loadConfig } from '../src/config.js';
import { createLogger } from '../src/logger.js';
import { createMetrics } from '../src/metrics.js';
import { createHttpServer } from '../src/server.js';
import { form, makeResourceDir, packageKeys, packageRequest, sampleWorkflow } from './helpers.js';

// Caller tokens on the Express service (ADR 0140): configuration, 401/403, open paths, no token in any output.

const packer = newCallerToken(['package', 'inspect'], 'ci-packer');
const keys = newCallerToken(['key-gen'], 'keys');
const RECORDS = `${packer.record};${keys.record}`;

function lastByteFlipped(token: string): string {
  return token.slice(0, -1) + (token.at(-1) === 'A' ? 'B' : 'A');
}

function configError(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('loadConfig accepted the configuration');
}

describe('token configuration', () => {
  it('reads PACKAGER_TOKEN_HASHES or PACKAGER_TOKENS_FILE; a non-loopback address then needs no switch', () => {
    expect(loadConfig({ PACKAGER_TOKEN_HASHES: RECORDS }).tokens.map((t) => t.name)).toEqual([
      'ci-packer',
      'keys',
    ]);
    const file = join(mkdtempSync(join(tmpdir(), 'packager-tokens-')), 'tokens');
    writeFileSync(file, `# callers\n${packer.record}\n${keys.record}\n`);
    const c = loadConfig({ PACKAGER_TOKENS_FILE: file, PACKAGER_BIND_ADDRESS: '0.0.0.0' });
    expect(c.tokens).toHaveLength(2);
    expect(configError({ PACKAGER_TOKENS_FILE: file, PACKAGER_TOKEN_HASHES: RECORDS })).toMatch(/not both/);
    expect(configError({ PACKAGER_TOKENS_FILE: join(file, 'missing') })).toMatch(
      /^PACKAGER_TOKENS_FILE .* cannot be read/,
    );
    expect(configError({ PACKAGER_TOKEN_HASHES: '# nothing' })).toMatch(/holds no token record/);
  });

  it('without tokens, refuses an address other than loopback unless PACKAGER_ALLOW_UNAUTHENTICATED=1', () => {
    for (const a of ['127.0.0.1', '127.1.2.3', '::1', 'localhost']) expect(isLoopback(a)).toBe(true);
    for (const a of ['0.0.0.0', '::', '10.0.0.1', '192.168.1.2', 'example.org'])
      expect(isLoopback(a)).toBe(false);
    expect(configError({ PACKAGER_BIND_ADDRESS: '0.0.0.0' })).toMatch(
      /PACKAGER_BIND_ADDRESS 0\.0\.0\.0 is not loopback.*PACKAGER_ALLOW_UNAUTHENTICATED=1/,
    );
    expect(
      loadConfig({ PACKAGER_BIND_ADDRESS: '0.0.0.0', PACKAGER_ALLOW_UNAUTHENTICATED: '1' })
        .allowUnauthenticated,
    ).toBe(true);
    expect(configError({ PACKAGER_BIND_ADDRESS: '::', PACKAGER_ALLOW_UNAUTHENTICATED: '0' })).toMatch(
      /not loopback/,
    );
    expect(configError({ PACKAGER_ALLOW_UNAUTHENTICATED: 'yes' })).toMatch(
      /PACKAGER_ALLOW_UNAUTHENTICATED must be/,
    );
  });

  it('S175 a plain token or a weak hash is refused, naming the variable or file and the line, never the value', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'packager-tokens-')), 'tokens');
    const digest = tokenHash(packer.token).slice(7);
    const weak = [
      packer.token,
      `${packer.token} package ci`,
      'md5:9e107d9d372bb6826bd81d3542a419d6 package ci',
      'sha1:2fd4e1c67a2d28fced849ee1bb76e7391b93eb12 package ci',
      `sha256:${digest.slice(0, 32)} package ci`,
    ];
    for (const bad of weak) {
      const inline = configError({ PACKAGER_TOKEN_HASHES: `${keys.record}\n${bad}` });
      expect(inline).toMatch(/^PACKAGER_TOKEN_HASHES line 2: /);
      writeFileSync(file, `${keys.record}\n\n${bad}\n`);
      const fromFile = configError({ PACKAGER_TOKENS_FILE: file });
      expect(fromFile).toMatch(/^PACKAGER_TOKENS_FILE .* line 3: /);
      for (const msg of [inline, fromFile]) {
        expect(msg).not.toContain(packer.token);
        expect(msg).not.toContain(digest.slice(0, 16));
        expect(msg).not.toContain('9e107d9d');
        expect(msg).not.toContain('2fd4e1c6');
      }
    }
  });
});

describe('the service with tokens', () => {
  const logs: string[] = [];
  const metrics = createMetrics();
  let server: Server;
  let url = '';
  beforeAll(async () => {
    const log = createLogger((line) => logs.push(line), undefined, 'debug');
    const app = createApp({
      limits: DEFAULT_LIMITS,
      resourceDirs: [makeResourceDir()],
      log,
      metrics,
      tokens: parseTokenHashes(RECORDS),
    });
    server = createHttpServer(app, DEFAULT_LIMITS, DEFAULT_TIMEOUTS, log, metrics);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const bodies: string[] = [];
  async function call(path: string, authorization?: string, init: RequestInit = {}): Promise<Response> {
    const headers: Record<string, string> = { ...(init.headers as Record<string, string>) };
    if (authorization !== undefined) headers['authorization'] = authorization;
    const res = await fetch(`${url}${path}`, { ...init, headers });
    const text = await res.clone().text();
    bodies.push(text, JSON.stringify([...res.headers]));
    return res;
  }
  const wf = () => form(packageRequest(packageKeys()), JSON.stringify(sampleWorkflow()));

  it('S174 no token, another scheme, a wrong token, a token differing in its last byte → 401; another scope → 403', async () => {
    const cases: [string | undefined, string, RequestInit, number, string][] = [
      [undefined, '/workflow-package', { method: 'POST', body: wf() }, 401, 'REQUEST_UNAUTHENTICATED'],
      [
        'Basic Y2ktcGFja2VyOng=',
        '/workflow-package',
        { method: 'POST', body: wf() },
        401,
        'REQUEST_UNAUTHENTICATED',
      ],
      [
        `Bearer ${newCallerToken(['package'], 'x').token}`,
        '/workflow-package',
        { method: 'POST', body: wf() },
        401,
        'REQUEST_UNAUTHENTICATED',
      ],
      [
        `Bearer ${lastByteFlipped(packer.token)}`,
        '/workflow-package',
        { method: 'POST', body: wf() },
        401,
        'REQUEST_UNAUTHENTICATED',
      ],
      [`Bearer ${packer.token}`, '/string-encrypt', { method: 'POST', body: wf() }, 403, 'REQUEST_FORBIDDEN'],
      [`Bearer ${packer.token}`, '/key-gen?purpose=sign', {}, 403, 'REQUEST_FORBIDDEN'],
      [`Bearer ${keys.token}`, '/workflow-hash', { method: 'POST', body: '{}' }, 403, 'REQUEST_FORBIDDEN'],
    ];
    for (const [auth, path, init, status, code] of cases) {
      const res = await call(path, auth, init);
      expect([path, res.status]).toEqual([path, status]);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer realm="packager"/);
      const body = (await res.json()) as { code: string; status: number };
      expect([body.code, body.status]).toEqual([code, status]);
    }
  });

  it(
    'serves a token with the scope; /health, /ready, /metrics and /openapi.json stay open',
    { timeout: 10_000 },
    async () => {
      const ok = await call('/workflow-package', `Bearer ${packer.token}`, { method: 'POST', body: wf() });
      expect(ok.status).toBe(200);
      expect((await call('/key-gen?purpose=sign', `Bearer ${keys.token}`)).status).toBe(200);
      for (const path of ['/health', '/ready', '/metrics', '/openapi.json'])
        expect([path, (await call(path)).status]).toEqual([path, 200]);
    },
  );

  it('answers 401 before reading the body (a request whose body never comes)', async () => {
    const { port } = server.address() as AddressInfo;
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(
        {
          port,
          host: '127.0.0.1',
          method: 'POST',
          path: '/workflow-package',
          headers: { 'content-type': 'multipart/form-data; boundary=x', 'content-length': '1000000' },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
          req.destroy();
        },
      );
      req.on('error', reject);
      req.flushHeaders();
    });
    expect(status).toBe(401);
  });

  it('S174 the token never reaches a log line, a metric or an answer', async () => {
    await call('/workflow-hash', `Bearer ${packer.token}x`, { method: 'POST', body: '{}' });
    const text = await (await fetch(`${url}/metrics`)).text();
    await new Promise((r) => setImmediate(r));
    const outputs = [...logs, text, ...bodies].join('\n');
    expect(logs.length).toBeGreaterThan(5);
    for (const t of [packer.token, keys.token, packer.token.slice(6, 26), keys.token.slice(6, 26)])
      expect(outputs).not.toContain(t);
  });
});
