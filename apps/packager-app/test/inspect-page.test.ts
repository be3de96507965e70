import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { inspectPageHeaders, inspectPageHtml } from '@org/inspect-page';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AGENT_MAIN,
  APP,
  bootstrapCopy,
  build,
  freePort,
  listening,
  start,
  stop,
  tempDir,
  type Child,
} from './helpers.js';

// GET /inspect on the real agent process (apps/agent-runtime/dist/main.js) running the built packager.oapp, with
// caller tokens configured: the inspection page of @org/inspect-page (ADR 0146), its bytes and headers, open.
// A build takes 3-6 s, the agent starts in 1-3 s, on this shared 2-core machine.
const BUILD_MS = 60_000;
const START_MS = 30_000;

describe('the agent on the built bootstrap serves the inspection page', () => {
  let out = '';
  let agent: Child | undefined;
  let api = '';

  beforeAll(async () => {
    out = await build();
    const port = await freePort();
    const token = `oappt_${randomBytes(32).toString('base64url')}`;
    const record = `sha256:${createHash('sha256').update(token).digest('hex')} inspect tokens`;
    const bootstrap = bootstrapCopy(out, (r) => {
      r.allowHttpServerAccess[0]!.port = port;
      r.data = { ...r.data, callerTokenHashes: [record] } as typeof r.data;
    });
    agent = start(AGENT_MAIN, [bootstrap], { AGENT_DATA_DIR: join(tempDir(), 'agent-data') });
    await listening(agent);
    api = `http://127.0.0.1:${port}`;
  }, BUILD_MS + START_MS);

  afterAll(async () => {
    expect(await stop(agent), 'the agent drains and exits 0 on SIGTERM').toBe(0);
  });

  it('the build wrote the page script from @org/inspect-page', () => {
    const script = readFileSync(join(APP, 'resources', 'packager', 'inspect-page.js'), 'utf8');
    expect(script).toContain(JSON.stringify(new TextDecoder().decode(inspectPageHtml())));
  });

  it(
    'answers GET /inspect with the page and its headers, without a caller token',
    async () => {
      // The tokens are on: an operation without one is refused...
      expect((await fetch(`${api}/workflow-hash`, { method: 'POST', body: '{}' })).status).toBe(401);
      // ...and the page is not.
      const res = await fetch(`${api}/inspect`);
      expect(res.status).toBe(200);
      for (const [name, value] of Object.entries(inspectPageHeaders()))
        expect(res.headers.get(name), name).toBe(value);
      expect(res.headers.get('content-length')).toBe(String(inspectPageHtml().byteLength));
      expect(Buffer.from(await res.arrayBuffer()).equals(Buffer.from(inspectPageHtml()))).toBe(true);
      const head = await fetch(`${api}/inspect`, { method: 'HEAD' });
      expect(head.status).toBe(200);
      expect(head.headers.get('content-security-policy')).toBe(
        inspectPageHeaders()['Content-Security-Policy'],
      );
      expect((await head.arrayBuffer()).byteLength).toBe(0);
    },
    START_MS, // the first run of the page script (90 KiB) takes 1-3 s here
  );
});
