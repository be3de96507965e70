// GET /inspect on both front-ends (ADR 0146): the Express service serves the inspection page with serveInspectPage,
// the agent with the generated script of the app's /inspect steps. With caller tokens configured on both, the page
// is open on both and answered alike: the same status, the headers the page needs, and the same bytes.
import { createHash, randomBytes } from 'node:crypto';
import { inspectPageEtag, inspectPageHeaders, inspectPageHtml } from '@org/inspect-page';
import { describe, expect, it } from 'vitest';
import { both, useFrontEnds } from './harness.js';

const token = `oappt_${randomBytes(32).toString('base64url')}`;
const record = `sha256:${createHash('sha256').update(token).digest('hex')} inspect,key-gen tokens`;
const f = useFrontEnds({ callerTokenHashes: [record] });

/** The headers that matter for the page: its own (CSP, nosniff, framing, cache, ETag), its length and the request id. */
const PAGE_HEADERS = [
  ...Object.keys(inspectPageHeaders()).map((h) => h.toLowerCase()),
  'content-length',
  'x-request-id',
];

async function read(res: Response) {
  const headers: Record<string, string | null> = {};
  for (const h of PAGE_HEADERS) headers[h] = res.headers.get(h);
  return { status: res.status, headers, body: Buffer.from(await res.arrayBuffer()) };
}

describe('GET /inspect on both front-ends', () => {
  it('the same page, byte for byte, with the same headers, open although caller tokens are configured', async () => {
    const r = await both(f, 'inspect-get', () => ({ path: '/inspect' }));
    const [express, agent] = await Promise.all([read(r.express), read(r.agent)]);
    expect(express.status).toBe(200);
    expect(express.body.equals(Buffer.from(inspectPageHtml()))).toBe(true);
    expect(express.headers['content-security-policy']).toMatch(/connect-src 'none'/);
    expect(express.headers['x-request-id']).toBe('inspect-get');
    expect(agent.status).toBe(express.status);
    expect(agent.headers).toEqual(express.headers);
    expect(agent.body.equals(express.body)).toBe(true);
    // The tokens are on: an operation without one is refused on both.
    const refused = await both(f, 'inspect-tokens', () => ({ path: '/key-gen?purpose=sign' }));
    expect([refused.express.status, refused.agent.status]).toEqual([401, 401]);
  }, 30_000); // the agent's first run of the page script (90 KiB) takes 1-3 s here

  it('HEAD: the same headers and no body on both', async () => {
    const r = await both(f, 'inspect-head', () => ({ path: '/inspect', init: { method: 'HEAD' } }));
    const [express, agent] = await Promise.all([read(r.express), read(r.agent)]);
    expect(express.status).toBe(200);
    expect(express.headers['content-length']).toBe(String(inspectPageHtml().byteLength));
    expect(agent.status).toBe(express.status);
    expect(agent.headers).toEqual(express.headers);
    expect([express.body.length, agent.body.length]).toEqual([0, 0]);
  }, 30_000);

  it('304 on both to an If-None-Match naming the page ETag, with the page headers', async () => {
    const r = await both(f, 'inspect-304', () => ({
      path: '/inspect',
      init: { headers: { 'if-none-match': `"other", ${inspectPageEtag()}` } },
    }));
    const [express, agent] = await Promise.all([read(r.express), read(r.agent)]);
    expect([express.status, agent.status]).toEqual([304, 304]);
    // Content-Length differs: the Express service sends none with a 304, the agent its body's length, 0
    // (apps/packager-app README: the agent sets Content-Length itself for a step's answer).
    expect([express.headers['content-length'], agent.headers['content-length']]).toEqual([null, '0']);
    const { 'content-length': _e, ...expressHeaders } = express.headers;
    const { 'content-length': _a, ...agentHeaders } = agent.headers;
    expect(expressHeaders['etag']).toBe(inspectPageEtag());
    expect(agentHeaders).toEqual(expressHeaders);
    expect([express.body.length, agent.body.length]).toEqual([0, 0]);
  }, 30_000);
});
