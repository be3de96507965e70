import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { routes } from '../src/app.js';
import { DEFAULT_LIMITS } from '../src/config.js';
import { silentLogger } from '../src/logger.js';
import { createMetrics } from '../src/metrics.js';
import { Readiness } from '../src/readiness.js';
import { uploadOptionsByPath } from '../src/upload.js';
import { HEALTH_RESPONSE_SCHEMA, KEY_GEN_RESPONSE_SCHEMA, OPENAPI_DOCUMENT } from '../src/openapi.js';
import { problem, useServer, type Body } from './helpers.js';

const srv = useServer();

/** Every method+path the app dispatches (its route table, one middleware), excluding the 404/405 fallback. */
function registeredRoutes(): string[] {
  const deps = { limits: DEFAULT_LIMITS, resourceDirs: [], log: silentLogger };
  return routes(
    { ...deps, uploads: uploadOptionsByPath(DEFAULT_LIMITS) },
    { readiness: new Readiness('ready'), metrics: createMetrics() },
  )
    .map((r) => `${r.method} ${r.path}`)
    .sort();
}

function documentedRoutes(): string[] {
  const out: string[] = [];
  for (const [path, item] of Object.entries(OPENAPI_DOCUMENT.paths))
    for (const method of Object.keys(item)) out.push(`${method} ${path}`);
  return out.sort();
}

describe('routing and the OpenAPI document', () => {
  it('documents exactly the routes the app registers', () => {
    expect(documentedRoutes()).toEqual(registeredRoutes());
    expect(registeredRoutes()).toHaveLength(14);
  });

  it('serves the document at GET /openapi.json as OpenAPI 3.1', async () => {
    const res = await fetch(`${srv.url}/openapi.json`);
    const body = (await res.json()) as Body;
    expect(body.openapi).toBe('3.1.0');
    expect(Object.keys(body.paths).sort()).toEqual(Object.keys(OPENAPI_DOCUMENT.paths).sort());
  });

  it('answers GET /health with {"ok":true} matching its schema', async () => {
    const ajv = new Ajv({ strict: false });
    const res = await fetch(`${srv.url}/health`);
    expect(res.status).toBe(200);
    expect(ajv.validate(HEALTH_RESPONSE_SCHEMA, await res.json())).toBe(true);
  });

  it('answers key-gen with a body matching the documented schema', async () => {
    const ajv = new Ajv({ strict: false });
    for (const purpose of ['sign', 'symmetric']) {
      const body = await (await fetch(`${srv.url}/key-gen?purpose=${purpose}`)).json();
      expect(ajv.validate(KEY_GEN_RESPONSE_SCHEMA, body), JSON.stringify(ajv.errors)).toBe(true);
    }
  });

  it('answers problems that match the documented Problem schema', async () => {
    const ajv = new Ajv({ strict: false });
    const body = await problem(await fetch(`${srv.url}/key-gen`));
    expect(ajv.validate(OPENAPI_DOCUMENT.components.schemas.Problem, body)).toBe(true);
    expect(body.type).toBe('urn:example:oapp:problem:request-missing-purpose');
    expect(body.instance).toMatch(/^urn:uuid:[0-9a-f-]{36}$/);
  });

  it('answers an unknown path with 404 REQUEST_NOT_FOUND', async () => {
    const res = await fetch(`${srv.url}/workflow-packages`);
    expect(res.status).toBe(404);
    expect((await problem(res)).code).toBe('REQUEST_NOT_FOUND');
  });

  it('answers a wrong method with 405 REQUEST_METHOD_NOT_ALLOWED and Allow', async () => {
    const res = await fetch(`${srv.url}/workflow-package`);
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
    expect((await problem(res)).code).toBe('REQUEST_METHOD_NOT_ALLOWED');
    const del = await fetch(`${srv.url}/health`, { method: 'DELETE' });
    expect(del.headers.get('allow')).toBe('GET, HEAD');
  });

  it('dispatches every route of the table, HEAD for a GET route, and nothing by another case or a trailing slash', async () => {
    for (const route of registeredRoutes()) {
      const [method, path] = route.split(' ') as [string, string];
      const res = await fetch(`${srv.url}${path}`, { method: method.toUpperCase() });
      await res.arrayBuffer();
      expect([404, 405]).not.toContain(res.status);
    }
    const head = await fetch(`${srv.url}/health`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    for (const path of ['/health/', '/Health', '/string-encrypt/', '/String-Encrypt']) {
      const res = await fetch(`${srv.url}${path}`, { method: path.includes('tring') ? 'POST' : 'GET' });
      expect(res.status).toBe(404);
      expect((await problem(res)).code).toBe('REQUEST_NOT_FOUND');
    }
  });

  it('answers a malformed path encoding with a problem, not a stack trace', async () => {
    const res = await fetch(`${srv.url}/%E0%A4%A`);
    expect(res.status).toBe(400);
    const body = await problem(res);
    expect(body.code).toBe('REQUEST_MALFORMED');
    expect(JSON.stringify(body)).not.toContain('decode');
  });
});
