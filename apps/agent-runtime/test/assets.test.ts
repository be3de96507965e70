import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeAssetZip } from './asset-zip.js';
import { makeKeys, makeRecord, tempDir, writePackage } from './fixtures.js';
import { startAgent, type RunningAgent } from './agent-helpers.js';

// The agent end to end: a verified package with an httpFile step, a zip declared in allowFileAccess.

const keys = makeKeys();
const dir = tempDir();
const workflow = {
  workflows: [
    {
      name: 'site',
      steps: [
        {
          stepId: 'site',
          type: 'httpFile',
          trigger: { http: { server: 'api', method: 'GET', path: '/site/.*' } },
        },
        {
          stepId: 'api',
          trigger: { http: { server: 'api', method: 'GET', path: '/api/ping' } },
          resultsProcessor: { script: "context.setBody('pong')" },
        },
      ],
    },
  ],
};
const recordWith = (zip: string) =>
  makeRecord(keys, writePackage(dir, keys, { workflow }), {
    allowFileAccess: [{ id: 'site-zip', directoryOrFile: zip, READ: true }],
    allowHttpServerAccess: [
      { id: 'api', port: 18080, serveFromPackagedAsset: { packagedAssetFileId: 'site-zip' } },
    ],
  });

describe('httpFile steps in the agent', () => {
  let a: RunningAgent;
  beforeAll(async () => {
    const zip = await writeAssetZip(join(dir, 'site.zip'), {
      'index.html': '<h1>site</h1>',
      'js/app.js': 'console.log(1);'.repeat(10_000),
    });
    a = await startAgent(keys, [recordWith(zip)]);
  });
  afterAll(() => a.close());

  it('serves the zip beside the scripted steps of the same server', async () => {
    const page = await fetch(`${a.url()}/site/`);
    expect([page.status, page.headers.get('content-type'), await page.text()]).toEqual([
      200,
      'text/html; charset=utf-8',
      '<h1>site</h1>',
    ]);
    const js = await fetch(`${a.url()}/site/js/app.js`);
    expect((await js.text()).length).toBe(150_000);
    expect(await (await fetch(`${a.url()}/api/ping`)).text()).toBe('pong');
  });

  it('revalidates with ETag / If-None-Match', async () => {
    const etag = (await fetch(`${a.url()}/site/index.html`)).headers.get('etag')!;
    const again = await fetch(`${a.url()}/site/index.html`, { headers: { 'if-none-match': etag } });
    expect([again.status, again.headers.get('etag')]).toEqual([304, etag]);
  });

  it('answers a missing file with a 404 problem', async () => {
    const r = await fetch(`${a.url()}/site/missing.css`);
    expect([r.status, ((await r.json()) as { code: string }).code]).toEqual([404, 'AGENT_ASSET_NOT_FOUND']);
  });
});

describe('agent start-up with a packaged asset', () => {
  it('stops with AGENT_ASSET_INVALID naming the zip when it holds a zip-slip name', async () => {
    const zip = await writeAssetZip(join(dir, 'slip.zip'), { 'ok.txt': 'ok' });
    // yazl refuses to write `../x`, so the slip is patched into the file: same length, central and local names.
    writeFileSync(
      zip,
      Buffer.from(readFileSync(zip).toString('latin1').replaceAll('ok.txt', '../okt'), 'latin1'),
    );
    const err = await startAgent(keys, [recordWith(zip)]).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'AGENT_ASSET_INVALID' });
    expect((err as Error).message).toContain(JSON.stringify(zip));
    expect((err as Error).message).toMatch(/invalid relative path: \.\.\/okt$/);
  });

  it('stops with AGENT_ASSET_UNREADABLE when the zip is missing', async () => {
    await expect(startAgent(keys, [recordWith(join(dir, 'missing.zip'))])).rejects.toMatchObject({
      code: 'AGENT_ASSET_UNREADABLE',
    });
  });
});
