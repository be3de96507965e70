import { existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { REDACTED } from '@org/workflow-engine';
import { afterEach, describe, expect, it } from 'vitest';
import { until } from '../agent-helpers.js';
import { writeAssetZip } from '../asset-zip.js';
import { encryptedBootstrap, makeKeys, makeRecord, tempDir, tuple, writePackage } from '../fixtures.js';
import { freePort, killAll, listeningLine, spawnMain, type Child } from './spawn.js';

// Two packaged deployments in one built agent process, chained through files and an in-process call:
// a browser loads the portal's UI from a packaged zip and uploads a file; the portal writes it with
// context.files('inbox'); the worker's fileWatcher picks up each line and acknowledges it through an `inProc`
// host on the portal's inProcOnly server, which records the acknowledgement (a metric and a file).

const HERE = dirname(fileURLToPath(import.meta.url));
const AGENT = join(HERE, '..', '..', 'dist', 'main.js');
/** A fixed header of the worker's inProc host: registered with the redactor, so it never reaches the output. */
const ACK_KEY = 'ack-key-7f3e91c2d0b4';
const UPLOAD_LIMIT = 1024;
const INBOX_NAMES = '[a-z0-9-]{1,64}\\.txt';
const INDEX_HTML = '<!doctype html><title>portal</title><script src="app.js"></script>';
const APP_JS = "document.title = 'portal ready';";

const PORTAL = {
  workflows: [
    {
      name: 'portal',
      steps: [
        {
          stepId: 'site',
          type: 'httpFile',
          trigger: { http: { server: 'web', method: 'GET', path: '/.*' } },
        },
        {
          stepId: 'upload',
          trigger: {
            http: { server: 'web', method: 'POST', path: '/upload', multiPartUploadByteLimit: UPLOAD_LIMIT },
          },
          resultsProcessor: {
            script: [
              'const meta = JSON.parse(context.getBody());',
              'const text = context.bytes().toString(context.getStream().readAll());',
              "context.files('inbox').write(meta.name, text);",
              "context.setProperty('status_code', 201);",
              "context.setHeader('content-type', 'application/json');",
              'context.setBody(JSON.stringify({ stored: meta.name, bytes: text.length }));',
            ].join('\n'),
          },
        },
        {
          stepId: 'ack',
          trigger: { http: { server: 'internal', method: 'POST', path: '/ack' } },
          resultsProcessor: {
            script: [
              'const o = JSON.parse(context.getBody());',
              "const from = context.getProperty('http.inProcDeploymentId');",
              "const n = context.counter('acks', 1);",
              "context.files('acks').write('ack-' + n + '.txt', o.file + ':' + o.line + ' from ' + from);",
              "console.log('ack key ' + JSON.parse(context.getHeader('x-ack-key'))[0]);",
              "context.sendMetric(context.getTimestamp(), 'portal.ack', n, { line: o.line, file: o.file, from: String(from) });",
              'context.setBody(JSON.stringify({ ack: n }));',
            ].join('\n'),
          },
        },
      ],
    },
  ],
};

const WORKER = {
  workflows: [
    {
      name: 'worker',
      steps: [
        {
          stepId: 'forward',
          type: 'scripted-split-aggregate',
          trigger: { fileWatcher: { bootstrapFileId: 'inbox', eventSplitter: '\\n', splitAtEnd: true } },
          splitGenerator: {
            script: [
              "const file = context.getProperty('file.name');",
              'for (const e of JSON.parse(context.getBody())) {',
              '  const line = e.message.trim();',
              '  if (line !== "") context.addSplitReturnItem({ file: file, line: line });',
              '}',
              "context.setHttpMethod('POST');",
              "context.setHeader('content-type', 'application/json');",
            ].join('\n'),
          },
          urlGenerator: { script: "context.setUrl('portal-ack', '/ack')" },
          // An item is the call's input, not its body (engine SPEC.md 4.3): the payloadGenerator sends it.
          payloadGenerator: { script: 'context.setBody(context.getBody())' },
          itemResultProcessor: {
            script:
              "if (context.getProperty('status_code') !== '200') context.addSystemError('ack answered ' + context.getProperty('status_code'));",
          },
          resultsProcessor: {
            script: "console.log('forwarded ' + JSON.parse(context.getBody()).length + ' lines')",
          },
        },
      ],
    },
  ],
};

type Line = Record<string, unknown>;
const lines = (out: string): Line[] =>
  out
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Line);

/**
 * Listening TCP sockets held by process `pid` (Linux: its socket inodes in /proc/<pid>/fd matched against the
 * LISTEN rows of /proc/net/tcp and tcp6), as local ports; undefined where /proc is not available.
 */
function listeningPorts(pid: number): number[] | undefined {
  if (!existsSync(`/proc/${pid}/fd`) || !existsSync('/proc/net/tcp')) return undefined;
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(m[1]!);
    } catch {
      // closed between the listing and the readlink
    }
  }
  const ports: number[] = [];
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    if (!existsSync(table)) continue;
    for (const row of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const f = row.trim().split(/\s+/);
      // f[1] local address:port (hex), f[3] state (0A = LISTEN), f[9] inode
      if (f.length > 9 && f[3] === '0A' && inodes.has(f[9]!))
        ports.push(Number.parseInt(f[1]!.split(':')[1]!, 16));
    }
  }
  return ports.sort((a, b) => a - b);
}

afterEach(() => killAll());

describe.skipIf(!existsSync(AGENT))(
  'agent dist/main.js: packaged UI, upload, files, fileWatcher, inProc',
  () => {
    it(
      'serves the UI from a packaged zip, stores an upload, and the other deployment acknowledges each line in process',
      { timeout: 60_000 },
      async () => {
        const keys = makeKeys();
        const dir = tempDir();
        const dataDir = join(dir, 'data');
        mkdirSync(join(dir, 'inbox'));
        mkdirSync(join(dir, 'acks'));
        await writeAssetZip(join(dir, 'site.zip'), { 'index.html': INDEX_HTML, 'app.js': APP_JS });

        const record = (id: string, workflow: object, extra: Record<string, unknown>) => {
          const packageId = `${id}-app`;
          const r = makeRecord(keys, writePackage(dir, keys, { packageId, workflow }), extra);
          return { ...r, deploymentId: id, packaging: { ...r.packaging, packageId } };
        };
        const port = await freePort();
        // Relative file paths start at the agent's working directory (`dir`).
        const portal = record('portal', PORTAL, {
          allowHttpServerAccess: [
            { id: 'web', port, serveFromPackagedAsset: { packagedAssetFileId: 'site' } },
            { id: 'internal', inProcOnly: true },
          ],
          allowFileAccess: [
            { id: 'site', directoryOrFile: 'site.zip', READ: true, required: true },
            { id: 'inbox', directoryOrFile: 'inbox', patterns: [INBOX_NAMES], WRITE: true, required: true },
            { id: 'acks', directoryOrFile: 'acks', WRITE: true, required: true },
          ],
          // The receiving side's grant: the worker may reach the portal's servers (S149).
          allowDeploymentAccess: [{ id: 'from-worker', access: 'receive', deploymentIds: ['worker'] }],
        });
        const worker = record('worker', WORKER, {
          startupPriority: 1,
          allowHttpServerAccess: [],
          allowFileAccess: [
            { id: 'inbox', directoryOrFile: 'inbox', patterns: [INBOX_NAMES], READ: true, required: true },
          ],
          // The calling side's grant: an inProc host naming the portal's inProcOnly server, POST /ack only.
          allowExternalHostAccess: [
            {
              id: 'portal-ack',
              transport: 'inProc',
              inProcServerId: 'internal',
              inProcDeploymentId: 'portal',
              headers: { 'x-ack-key': ACK_KEY },
              allowList: [{ method: 'POST', uriPattern: '/ack' }],
            },
          ],
        });
        const bootstrap = join(dir, 'bootstrap.enc');
        writeFileSync(bootstrap, encryptedBootstrap(keys, [portal, worker]));

        const agent: Child = spawnMain(
          AGENT,
          {
            AGENT_BOOTSTRAP: bootstrap,
            AGENT_BOOTSTRAP_SECRETKEY: tuple(keys.packager, keys.agent),
            AGENT_DATA_DIR: dataDir,
            // No admin listener: the ports held below are the trigger servers' only.
            AGENT_ADMIN_PORT: 'off',
          },
          dir,
        );
        const listening = await listeningLine(agent);
        // Only the portal's web server listens: the inProcOnly server has no port.
        expect(listening['servers']).toEqual([
          { deploymentId: 'portal', id: 'web', port, address: '127.0.0.1' },
        ]);
        const held = listeningPorts(agent.proc.pid!);
        if (held !== undefined) expect(held).toEqual([port]);
        const loaded = lines(agent.stdout()).filter((l) => l['msg'] === 'deployment loaded');
        expect(loaded.map((l) => l['deploymentId'])).toEqual(['portal', 'worker']);
        expect(lines(agent.stdout()).filter((l) => l['msg'] === 'unsupported feature')).toEqual([]);

        // The UI, from the packaged zip.
        const base = `http://127.0.0.1:${port}`;
        const page = await fetch(`${base}/`);
        expect([page.status, page.headers.get('content-type'), await page.text()]).toEqual([
          200,
          'text/html; charset=utf-8',
          INDEX_HTML,
        ]);
        const etag = page.headers.get('etag');
        expect(etag).toMatch(/^"[0-9a-f]+-[0-9a-f]+"$/);
        const again = await fetch(`${base}/`, { headers: { 'if-none-match': etag! } });
        expect([again.status, again.headers.get('etag'), await again.text()]).toEqual([304, etag, '']);
        const js = await fetch(`${base}/app.js`);
        expect(js.status).toBe(200);
        expect(js.headers.get('content-type')).toMatch(/^(text|application)\/javascript/);
        expect(await js.text()).toBe(APP_JS);

        // The upload: over the limit is refused and nothing is written; within it, stored through files().
        const upload = (name: string, content: string | Uint8Array) => {
          const form = new FormData();
          form.append('body', JSON.stringify({ name }));
          form.append('stream', new Blob([content], { type: 'text/plain' }), name);
          return fetch(`${base}/upload`, { method: 'POST', body: form });
        };
        const tooBig = await upload('big.txt', new Uint8Array(UPLOAD_LIMIT + 1).fill(0x61));
        expect([tooBig.status, ((await tooBig.json()) as { code: string }).code]).toEqual([
          413,
          'UPLOAD_FILE_TOO_LARGE',
        ]);
        const orders = 'order-1\norder-2\norder-3\n';
        const stored = await upload('orders-1.txt', orders);
        expect([stored.status, await stored.json()]).toEqual([
          201,
          { stored: 'orders-1.txt', bytes: orders.length },
        ]);
        expect(readFileSync(join(dir, 'inbox', 'orders-1.txt'), 'utf8')).toBe(orders);
        expect(readdirSync(join(dir, 'inbox'))).toEqual(['orders-1.txt']);

        // The worker's fileWatcher sees the lines and acknowledges each one in the portal, over inProc.
        const acks = () =>
          lines(agent.stdout()).filter((l) => l['type'] === 'metric' && l['key'] === 'portal.ack');
        await until(() => acks().length >= 3, 30_000);
        expect(
          acks()
            .map((l) => l['dimensions'] as Record<string, string>)
            .sort((a, b) => a['line']!.localeCompare(b['line']!)),
        ).toEqual(
          ['order-1', 'order-2', 'order-3'].map((line) => ({ line, file: 'orders-1.txt', from: 'worker' })),
        );
        expect(acks().every((l) => l['deploymentId'] === 'portal')).toBe(true);
        await until(() => lines(agent.stdout()).some((l) => l['msg'] === 'forwarded 3 lines'), 10_000);
        const written = readdirSync(join(dir, 'acks')).sort();
        expect(written).toEqual(['ack-1.txt', 'ack-2.txt', 'ack-3.txt']);
        expect(written.map((f) => readFileSync(join(dir, 'acks', f), 'utf8')).sort()).toEqual(
          ['order-1', 'order-2', 'order-3'].map((l) => `orders-1.txt:${l} from worker`),
        );
        // The fixed header reached the portal's step, and shows only redacted.
        expect(lines(agent.stdout()).filter((l) => l['msg'] === `ack key ${REDACTED}`)).toHaveLength(3);

        agent.proc.kill('SIGTERM');
        expect(await agent.exited).toBe(0);
        const out = lines(agent.stdout());
        const counters = (d: string, s: string) =>
          out.find((l) => l['msg'] === 'step counters' && l['deploymentId'] === d && l['stepId'] === s);
        // Every trigger's runs are counted: the asset answers, the refused and the stored upload, the in-process
        // acks, and the fileWatcher run(s) (one per batch; the three lines may arrive in one or more).
        expect(counters('portal', 'site')).toMatchObject({ runs: 3, errors: 0, httpRuns: 3 });
        expect(counters('portal', 'upload')).toMatchObject({ runs: 2, errors: 1, httpRuns: 2 });
        expect(counters('portal', 'ack')).toMatchObject({ runs: 3, errors: 0, httpRuns: 3 });
        expect(counters('worker', 'forward')).toMatchObject({ errors: 0, running: 0, httpRuns: 0 });
        expect(counters('worker', 'forward')!['runs']).toBeGreaterThanOrEqual(1);
        expect(out.filter((l) => l['level'] === 'error')).toEqual([]);
        // The worker's read offsets are kept under the data directory.
        expect(existsSync(join(dataDir, 'file-watch'))).toBe(true);
        const output = agent.stdout() + agent.stderr();
        expect(output).not.toContain(ACK_KEY);
        expect(output).not.toContain(Buffer.from(ACK_KEY).toString('base64'));
        expect(agent.stderr()).toBe('');
      },
    );
  },
);
