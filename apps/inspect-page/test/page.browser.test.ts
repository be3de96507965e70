// The page in a real browser (Debian's Chromium, driven by Playwright: playwright-core, no browser of its own),
// served on loopback by serveInspectPage and opened from the file system: a good package, tampered ones, a policy
// failing each rule (the same codes as `oapp verify`), hostile text (S178), a 100 MiB package, keyboard use, and no
// request at all after the page itself (Playwright's request events and a route that refuses and records any other).
import { execFile } from 'node:child_process';
import {
  existsSync,
  mkdtempSync,
  openSync,
  closeSync,
  readFileSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { generateKeyPair, keyToHex, type Key, type KeyPair } from '@org/envelope-crypto';
import { MAGIC, createPackage, inspectPackage, writePackage } from '@org/oapp-format';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveInspectPage } from '../src/index.js';

const run = promisify(execFile);
const CLI = resolve(import.meta.dirname, '../../cli/bin/oapp.js');
const PAGE_FILE = resolve(import.meta.dirname, '../dist/inspect.html');
const MIB = 1024 * 1024;

/** Debian's Chromium (scripts/test.sh installs it); Playwright drives it, it downloads no browser. */
const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';
/** Playwright's own bound on one wait or action in the page: the tests' own timeouts are the real bounds. */
const PAGE_WAIT_MS = 170_000;

// Without Chromium the suite is skipped on a developer's machine, never in CI (scripts/test.sh installs it).
const haveBrowser = existsSync(CHROMIUM);
if (!haveBrowser && process.env['CI'] !== undefined) {
  throw new Error(
    'Chromium is missing at /usr/bin/chromium: apt-get install -y chromium (scripts/test.sh does)',
  );
}

interface Keys {
  packager: KeyPair;
  otherPackager: KeyPair;
  deployment: KeyPair;
  author: KeyPair;
  stranger: KeyPair;
  add1: KeyPair;
  add2: KeyPair;
}

const pub = (id: string, k: KeyPair) => ({
  id,
  purpose: k.purpose,
  type: 'public',
  keyHex: keyToHex(k.publicKey!),
});
const sec = (id: string, k: KeyPair) => ({
  id,
  purpose: k.purpose,
  type: 'secret',
  keyHex: keyToHex(k.secretKey),
});

/** A bootstrap with one deployment record, its own secret key included as in real ones (the page leaves it out). */
function bootstrap(keys: Keys, packaging: Record<string, unknown>, pkgPath: string, secret = true): string {
  return JSON.stringify([
    {
      deploymentId: 'hello-1',
      remoteConfiguration: pkgPath,
      packaging: {
        packageId: 'hello-app',
        packagerIdentities: ['packager'],
        requiredSigners: [{ id: 'author' }],
        ...packaging,
      },
      keys: [
        pub('packager', keys.packager),
        pub('other-packager', keys.otherPackager),
        ...(secret ? [sec('deployment', keys.deployment)] : []),
        pub('author', keys.author),
        pub('stranger', keys.stranger),
        pub('add1', keys.add1),
        pub('add2', keys.add2),
      ],
    },
  ]);
}

interface Shown {
  state: string;
  runs: number;
  status: string;
  rows: Record<string, string>;
  signatures: { fingerprint: string; status: string; text: string }[];
  verdict: string | null;
  rules: { rule: string; result: string }[];
  report: string;
  bodyText: string;
}

const READ_PAGE = `(() => {
  const rows = {};
  for (const tr of document.querySelectorAll('#package-table tbody tr')) rows[tr.cells[0].textContent] = tr.cells[1].textContent;
  const signatures = [...document.querySelectorAll('#signature-table tbody tr')].map((tr) => ({
    fingerprint: tr.cells[0].textContent, status: tr.cells[1].textContent, text: tr.cells[2].textContent }));
  const section = document.getElementById('policy-section');
  const rules = section.hidden ? [] : [...document.querySelectorAll('#rule-table tbody tr')].map((tr) => ({
    rule: tr.cells[0].textContent, result: tr.cells[1].textContent }));
  return { state: document.body.dataset.state, runs: Number(document.body.dataset.runs ?? 0),
    status: document.getElementById('status').textContent, rows, signatures,
    verdict: section.hidden ? null : document.getElementById('verdict').textContent, rules,
    report: document.getElementById('report').value, bodyText: document.body.innerText };
})()`;

/** Evaluates `expression` in the page (awaiting a promise) and returns its JSON value. */
function evaluate<T>(page: Page, expression: string): Promise<T> {
  return page.evaluate<T>(expression);
}

/**
 * Polls `expression` until it is truthy in the page. Not `page.waitForFunction`: that evaluates a string with
 * `eval`, which the page's CSP forbids; each evaluation here is a DevTools call, which CSP does not govern. No
 * clock: a bound on the number of tries, each after a short pause.
 */
async function waitFor(page: Page, expression: string, tries = 20_000): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (await evaluate<boolean>(page, `Boolean(${expression})`)) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`never true in the page: ${expression}`);
}

/**
 * Drags files from outside the browser and drops them on the centre of `selector`: Playwright has no call for a
 * drag from the desktop, so this uses its DevTools session with Chromium (Input.dispatchDragEvent with paths).
 */
async function dropFiles(page: Page, selector: string, files: readonly string[]): Promise<void> {
  const target = page.locator(selector).first();
  await target.scrollIntoViewIfNeeded();
  const box = await target.boundingBox();
  if (box === null) throw new Error(`no visible element ${selector}`);
  const session = await page.context().newCDPSession(page);
  try {
    const data = { items: [], files: [...files], dragOperationsMask: 1 };
    const [x, y] = [box.x + box.width / 2, box.y + box.height / 2];
    for (const type of ['dragEnter', 'dragOver', 'drop'] as const) {
      await session.send('Input.dispatchDragEvent', { type, x, y, data });
    }
  } finally {
    await session.detach();
  }
}

/** A browser context whose pages may load `allowed` only: a route refuses and records any other request. */
async function guardedContext(browser: Browser, allowed: () => string) {
  const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
  context.setDefaultTimeout(PAGE_WAIT_MS);
  /** Every request a page of the context started (Playwright's request event), in order. */
  const requests: string[] = [];
  /** Requests the route refused: none may happen. */
  const refused: string[] = [];
  /** Requests that got an answer (the page's own document only), and requests that failed, with Chromium's reason. */
  const answered: string[] = [];
  const failed: { url: string; error: string }[] = [];
  context.on('request', (r) => requests.push(r.url()));
  context.on('response', (r) => answered.push(r.url()));
  context.on('requestfailed', (r) => failed.push({ url: r.url(), error: r.failure()?.errorText ?? '' }));
  await context.route('**/*', async (route) => {
    const url = route.request().url();
    if (url === allowed()) await route.continue();
    else {
      refused.push(url);
      await route.abort('blockedbyclient');
    }
  });
  return { context, requests, refused, answered, failed };
}

async function show(page: Page, pkg: string, policy = ''): Promise<Shown> {
  const runs = await evaluate<number>(page, 'Number(document.body.dataset.runs ?? 0)');
  // A file input fires no change event for the file it already holds: empty it first.
  await evaluate(
    page,
    `document.getElementById('policy').value = ${JSON.stringify(policy)}; document.getElementById('file').value = ''`,
  );
  await page.setInputFiles('#file', [pkg]);
  await waitFor(
    page,
    `Number(document.body.dataset.runs ?? 0) > ${runs} && document.body.dataset.state === 'done'`,
  );
  return evaluate<Shown>(page, READ_PAGE);
}

/** The policy of `packaging` (over the keys of {@link bootstrap}) as `oapp verify`'s options, key files in `dir`. */
function policyFlags(keys: Keys, dir: string, packaging: Record<string, unknown>): string[] {
  const p = {
    packageId: 'hello-app',
    packagerIdentities: ['packager'],
    requiredSigners: ['author'],
    ...packaging,
  } as {
    packageId: string;
    packagerIdentities: string[];
    requiredSigners: (string | { id: string })[];
    additionalSigners?: string[];
    requiredAdditionalSignerCount?: number;
  };
  const byId: Record<string, KeyPair> = {
    packager: keys.packager,
    'other-packager': keys.otherPackager,
    author: keys.author,
    stranger: keys.stranger,
    add1: keys.add1,
    add2: keys.add2,
  };
  const keyFile = (id: string) => {
    const path = join(dir, `${id}.pub`);
    writeFileSync(path, JSON.stringify(pub(id, byId[id]!)));
    return path;
  };
  const idOf = (x: string | { id: string }) => (typeof x === 'string' ? x : x.id);
  return [
    '--package-id',
    p.packageId,
    ...p.packagerIdentities.flatMap((id) => ['--packager', keyFile(id)]),
    ...p.requiredSigners.flatMap((x) => ['--required-signer', keyFile(idOf(x))]),
    ...(p.additionalSigners ?? []).flatMap((id) => ['--additional-signer', keyFile(id)]),
    ...(p.requiredAdditionalSignerCount === undefined
      ? []
      : ['--threshold', String(p.requiredAdditionalSignerCount)]),
  ];
}

/** The codes `oapp verify` reports for the package under a policy given by its options (empty when it verifies). */
async function cliCodes(pkg: string, flags: readonly string[]): Promise<string[]> {
  try {
    await run(process.execPath, [CLI, 'verify', pkg, ...flags, '--json']);
    return [];
  } catch (err) {
    const out = (err as { stdout: string }).stdout;
    const doc = JSON.parse(out) as { errors?: { code: string }[] };
    return doc.errors?.map((e) => e.code) ?? ['(no codes)'];
  }
}

const failedCodes = (s: Shown) =>
  s.rules.filter((r) => r.result.startsWith('FAIL')).map((r) => /^FAIL ([A-Z_]+):/.exec(r.result)![1]!);

describe.skipIf(!haveBrowser)('the inspection page in Chromium', () => {
  let dir: string;
  let keys: Keys;
  let good: string;
  let goodBytes: Uint8Array;
  let hostile: string;
  let browser: Browser;
  let server: Server;
  let served: string[];
  let base: string;

  const file = (name: string, bytes: Uint8Array | string) => {
    const p = join(dir, name);
    writeFileSync(p, bytes);
    return p;
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'inspect-page-'));
    keys = {
      packager: generateKeyPair('authenticated'),
      otherPackager: generateKeyPair('authenticated'),
      deployment: generateKeyPair('authenticated'),
      author: generateKeyPair('sign'),
      stranger: generateKeyPair('sign'),
      add1: generateKeyPair('sign'),
      add2: generateKeyPair('sign'),
    };
    const content = new TextEncoder().encode(JSON.stringify({ workflows: [{ name: 'hello', steps: [] }] }));
    const common = {
      packagerSecretKey: keys.packager.secretKey,
      recipients: [keys.deployment.publicKey as Key],
      chunkSize: 1024,
    };
    goodBytes = createPackage({
      ...common,
      packageId: 'hello-app',
      content,
      signers: [
        { secretKey: keys.author.secretKey, signText: 'release 1' },
        { secretKey: keys.add1.secretKey, signText: 'reviewed by add1' },
      ],
      license: { name: 'Apache-2.0', holder: 'Example' },
    });
    good = file('good.oapp', goodBytes);
    hostile = file(
      'hostile.oapp',
      createPackage({
        ...common,
        packageId: 'hello-app',
        content,
        signers: [{ secretKey: keys.author.secretKey, signText: 'approved\u202E\u200Bgnp.exe\u0007' }],
        license: { name: 'MIT\u2066\u0000', note: '\u202Ereversed' },
      }),
    );
    served = [];
    server = createServer((req, res) => {
      served.push(`${req.method} ${req.url}`);
      if (req.url === '/inspect') serveInspectPage(req, res);
      else res.writeHead(404).end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      // Root in a container has no user namespace for Chromium's sandbox (Playwright then adds --no-sandbox);
      // the page under test is our own. File pages may read the chosen files.
      chromiumSandbox: false,
      args: ['--disable-gpu', '--disable-dev-shm-usage', '--allow-file-access-from-files'],
      timeout: PAGE_WAIT_MS,
    });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await new Promise<void>((r) => (server === undefined ? r() : server.close(() => r())));
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  for (const where of ['loopback', 'file'] as const) {
    describe(`opened ${where === 'file' ? 'from the file system' : 'on loopback'}`, () => {
      let page: Page;
      let guarded: Awaited<ReturnType<typeof guardedContext>>;
      const url = () => (where === 'file' ? pathToFileURL(PAGE_FILE).href : `${base}/inspect`);

      beforeAll(async () => {
        guarded = await guardedContext(browser, url);
        page = await guarded.context.newPage();
        await page.goto(url());
        await waitFor(page, `document.body.dataset.state === 'ready'`);
      }, 60_000);

      afterAll(async () => {
        await guarded?.context.close();
      });

      it('shows what oapp inspect shows for a good package, and its signatures as valid', async () => {
        const s = await show(page, good);
        const i = await inspectPackage(goodBytes);
        expect(s.rows['package']).toBe('"hello-app" (app)');
        expect(s.rows['format']).toContain(`"${i.format}"`);
        expect(s.rows['created']).toBe(`"${i.createdAt}"`);
        expect(s.rows['packager']).toBe(`${i.packager.fingerprint}  ${i.packager.publicKeyHex}`);
        expect(s.rows['recipients']).toBe(`1: ${i.recipients[0]!.fingerprint}`);
        expect(s.rows['license']).toBe('{"name":"Apache-2.0","holder":"Example"}');
        expect(s.rows['envelope']).toMatch(/^0 links/);
        expect(s.rows['payload hash']).toMatch(/^matches the HEADER/);
        expect(s.signatures.map((x) => [x.fingerprint, x.text])).toEqual(
          i.signatures.map((x) => [x.fingerprint, `"${x.signText}"`]),
        );
        expect(s.signatures.every((x) => x.status.startsWith('valid signature, UNKNOWN SIGNER'))).toBe(true);
        expect(s.status).toMatch(/no format, signature or payload hash problem/);
        expect(s.report).toContain('package     "hello-app" (app)');
      }, 60_000);

      it('accepts the good package under its bootstrap, rule by rule, like oapp verify; secret keys left out', async () => {
        const b = bootstrap(keys, {}, good);
        const s = await show(page, good, b);
        expect(s.verdict).toMatch(
          /^ACCEPTED by the policy \(deployment "hello-1"\) \(1 secret key\(s\) in the policy were left out, unread\)$/,
        );
        expect(s.rules.map((r) => r.result)).toEqual(['pass', 'pass', 'pass']);
        expect(await cliCodes(good, policyFlags(keys, dir, {}))).toEqual([]);
        expect(s.signatures[0]!.status).toBe('valid, required signer "author"');
      }, 180_000);

      it('refuses under a policy that fails each rule, with the codes oapp verify reports', async () => {
        const cases: [string, Record<string, unknown>, string[]][] = [
          ['package id', { packageId: 'other-app' }, ['POLICY_PACKAGE_ID_MISMATCH']],
          ['packager', { packagerIdentities: ['other-packager'] }, ['POLICY_PACKAGER_NOT_TRUSTED']],
          [
            'required signer',
            { requiredSigners: ['author', 'stranger'] },
            ['POLICY_REQUIRED_SIGNER_MISSING'],
          ],
          [
            'threshold',
            { additionalSigners: ['add1', 'add2'], requiredAdditionalSignerCount: 2 },
            ['POLICY_SIGNER_THRESHOLD_NOT_MET'],
          ],
          [
            'all at once',
            {
              packageId: 'other-app',
              packagerIdentities: ['other-packager'],
              requiredSigners: ['stranger'],
              additionalSigners: ['add2'],
              requiredAdditionalSignerCount: 1,
            },
            [
              'POLICY_PACKAGE_ID_MISMATCH',
              'POLICY_PACKAGER_NOT_TRUSTED',
              'POLICY_REQUIRED_SIGNER_MISSING',
              'POLICY_SIGNER_THRESHOLD_NOT_MET',
            ],
          ],
        ];
        // The oapp verify runs (child processes) go side by side, and beside the page's.
        const cli = Promise.all(
          cases.map(([, packaging]) => cliCodes(good, policyFlags(keys, dir, packaging))),
        );
        for (const [name, packaging, codes] of cases) {
          const b = bootstrap(keys, packaging, good);
          const s = await show(page, good, b);
          expect(s.verdict, name).toMatch(/^REFUSED by the policy/);
          expect(failedCodes(s), name).toEqual(codes);
        }
        const cliCodesOf = await cli;
        for (const [n, [name, , codes]] of cases.entries()) expect(cliCodesOf[n], name).toEqual(codes);
      }, 180_000);

      it('shows the release fields of a v2 package and judges the policy floor on them', async () => {
        const expiresAt = new Date(Date.now() + 86_400_000);
        const v2 = file(
          'release.oapp',
          createPackage({
            packagerSecretKey: keys.packager.secretKey,
            recipients: [keys.deployment.publicKey as Key],
            packageId: 'hello-app',
            content: new TextEncoder().encode('{}'),
            signers: [{ secretKey: keys.author.secretKey, signText: 'release 42' }],
            sequence: 42,
            expiresAt,
          }),
        );
        const s = await show(page, v2, bootstrap(keys, { minimumSequence: 43 }, v2));
        expect(s.rows['format']).toBe('"oapp/v2", version 2');
        expect(s.rows['sequence']).toBe('42');
        expect(s.rows['expires']).toBe(`"${expiresAt.toISOString()}"`);
        expect(s.verdict).toMatch(/^REFUSED/);
        expect(s.rules.find((r) => r.rule === 'release sequence is at least 43')?.result).toMatch(
          /^FAIL POLICY_BELOW_MINIMUM:/,
        );
        const ok = await show(page, v2, bootstrap(keys, { minimumSequence: 42 }, v2));
        expect(ok.verdict).toMatch(/^ACCEPTED/);
        const v1 = file(
          'v1.oapp',
          createPackage({
            packagerSecretKey: keys.packager.secretKey,
            recipients: [keys.deployment.publicKey as Key],
            packageId: 'hello-app',
            content: new TextEncoder().encode('{}'),
            signers: [{ secretKey: keys.author.secretKey, signText: 'release 1' }],
            formatVersion: 1,
          }),
        );
        const old = await show(page, v1);
        expect(old.rows['format']).toBe('"oapp/v1", version 1');
        expect(old.rows['sequence']).toBeUndefined();
        expect(old.rows['expires']).toBeUndefined();
      }, 180_000);

      it('judges nothing under an encrypted bootstrap or a malformed policy, and still shows the package', async () => {
        // Base64 of bytes that start with the oapp magic: what an encrypted bootstrap looks like.
        const encrypted = await show(page, good, Buffer.from(goodBytes).toString('base64'));
        expect(encrypted.verdict).toMatch(/^not judged: PAGE_POLICY: this is an encrypted bootstrap/);
        expect(encrypted.rows['package']).toBe('"hello-app" (app)');
        const duplicate = await show(page, good, '{"packaging":{"packageId":"a","packageId":"b"},"keys":[]}');
        expect(duplicate.verdict).toMatch(/^not judged: FORMAT_JSON_DUPLICATE_KEY: /);
        expect(await evaluate<string>(page, `document.getElementById('verdict').className`)).toBe('bad');
      }, 60_000);

      it('takes a dropped package anywhere and a dropped policy on its box; picks among several deployments', async () => {
        const two = JSON.parse(bootstrap(keys, {}, good)) as Record<string, unknown>[];
        two.push({
          ...two[0]!,
          deploymentId: 'hello-2',
          packaging: { packageId: 'other-app', packagerIdentities: ['packager'] },
        });
        const policyPath = file('two-deployments.json', JSON.stringify(two));
        const runs = await evaluate<number>(page, 'Number(document.body.dataset.runs ?? 0)');
        await evaluate(page, `document.getElementById('policy').value = ''`);
        await dropFiles(page, 'h1', [good]);
        await waitFor(
          page,
          `Number(document.body.dataset.runs ?? 0) > ${runs} && document.body.dataset.state === 'done'`,
        );
        await dropFiles(page, '#policy', [policyPath]);
        await waitFor(
          page,
          `Number(document.body.dataset.runs ?? 0) > ${runs + 1} && document.body.dataset.state === 'done'`,
        );
        let s = await evaluate<Shown>(page, READ_PAGE);
        expect(s.rows['file']).toMatch(/^"good\.oapp"/);
        expect(s.verdict).toMatch(/^ACCEPTED by the policy \(deployment "hello-1"\)/);
        expect(await evaluate<boolean>(page, `document.getElementById('deployment-field').hidden`)).toBe(
          false,
        );
        await evaluate(
          page,
          `document.getElementById('deployment').value = 'hello-2'; document.getElementById('form').requestSubmit()`,
        );
        await waitFor(
          page,
          `Number(document.body.dataset.runs ?? 0) > ${runs + 2} && document.body.dataset.state === 'done'`,
        );
        s = await evaluate<Shown>(page, READ_PAGE);
        expect(s.verdict).toMatch(/^REFUSED by the policy \(deployment "hello-2"\)/);
        expect(failedCodes(s)).toEqual(['POLICY_PACKAGE_ID_MISMATCH']);
      }, 180_000);

      it('reports a tampered package whichever of several bytes changed', async () => {
        const at = (needle: string, nth = 0) => {
          const hay = Buffer.from(goodBytes);
          let p = -1;
          for (let k = 0; k <= nth; k++) p = hay.indexOf(needle, p + 1);
          expect(p, needle).toBeGreaterThan(0);
          return p;
        };
        const i = await inspectPackage(goodBytes);
        const payloadStart = goodBytes.length - i.payload.ciphertextBytes;
        const positions: [string, number][] = [
          ['magic', 0],
          ['frame version', MAGIC.length],
          ['HEADER package id', at('hello-app', 0)],
          ['STATEMENT package id', at('hello-app', 1)],
          ['a sign text', at('release 1')],
          ['the license', at('Apache-2.0')],
          ['first payload byte', payloadStart],
          ['a middle payload byte', payloadStart + (i.payload.ciphertextBytes >> 1)],
          ['last payload byte', goodBytes.length - 1],
        ];
        const b = bootstrap(keys, {}, good);
        for (const [name, pos] of positions) {
          const bad = Uint8Array.from(goodBytes);
          bad[pos]! ^= 0x01;
          const s = await show(page, file(`tampered-${pos}.oapp`, bad), b);
          const flagged =
            s.rows['error'] !== undefined ||
            s.signatures.some((x) => x.status === 'INVALID signature') ||
            /^DOES NOT MATCH/.test(s.rows['payload hash'] ?? '');
          expect(flagged, `${name} (byte ${pos}): ${JSON.stringify(s.rows)}`).toBe(true);
          expect(s.status, name).toMatch(/has [1-9][0-9]* problem/);
        }
      }, 180_000);

      it('S178 shows control, bidi and zero-width characters of a package escaped, never as they are', async () => {
        const s = await show(page, hostile);
        expect(s.signatures[0]!.text).toBe('"approved\\u{202E}\\u{200B}gnp.exe\\u{0007}"');
        expect(s.rows['license']).toBe('{"name":"MIT\\u{2066}\\u{0000}","note":"\\u{202E}reversed"}');
        for (const text of [s.bodyText, s.report]) {
          // eslint-disable-next-line no-control-regex -- the characters that must never reach the page
          expect(text).not.toMatch(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f\u200b\u202e\u2066]/);
        }
        expect(s.report).toContain('\\u{202E}');
        const json = await evaluate<string>(
          page,
          `(async () => { const w = navigator.clipboard.writeText.bind(navigator.clipboard); let got = '';
            navigator.clipboard.writeText = async (t) => { got = t; throw new Error('no clipboard in the test'); };
            document.getElementById('copy-json').click();
            await new Promise((r) => setTimeout(r, 0)); navigator.clipboard.writeText = w; return got; })()`,
        );
        expect(json).toContain('\\u202e');
        expect(json).not.toMatch(/[\u202e\u200b\u2066]/);
      }, 60_000);

      it('works with the keyboard alone once a file is chosen, and the report can be copied', async () => {
        await page.goto(url());
        await waitFor(page, `document.body.dataset.state === 'ready'`);
        await page.setInputFiles('#file', [good]);
        await waitFor(page, `document.body.dataset.state === 'done'`);
        const focusTo = async (id: string) => {
          for (let n = 0; n < 30; n++) {
            if ((await evaluate<string>(page, 'document.activeElement?.id ?? ""')) === id) return;
            await page.keyboard.press('Tab');
          }
          throw new Error(`Tab never reached #${id}`);
        };
        await focusTo('policy');
        await page.keyboard.insertText(bootstrap(keys, { packageId: 'other-app' }, 'good.oapp', false));
        await focusTo('run');
        const runs = await evaluate<number>(page, 'Number(document.body.dataset.runs)');
        await page.keyboard.press('Enter');
        await waitFor(
          page,
          `Number(document.body.dataset.runs) > ${runs} && document.body.dataset.state === 'done'`,
        );
        const s = await evaluate<Shown>(page, READ_PAGE);
        expect(s.verdict).toMatch(/^REFUSED/);
        await focusTo('copy-text');
        await page.keyboard.press('Space');
        await waitFor(page, `document.getElementById('copied').textContent !== ''`);
        const copied = await evaluate<{ note: string; report: string }>(
          page,
          `({ note: document.getElementById('copied').textContent, report: document.getElementById('report').value })`,
        );
        expect(copied.note).toMatch(/^(Copied\.|Selected: press Ctrl\+C)/);
        expect(copied.report).toContain('FAIL POLICY_PACKAGE_ID_MISMATCH');
        if (where === 'loopback' && process.env['UPDATE_SCREENSHOT'] === '1') {
          writeFileSync(
            resolve(import.meta.dirname, '../docs/screenshot.png'),
            await page.screenshot({ fullPage: true }),
          );
        }
      }, 180_000);

      it('made no network request but the page itself, and cannot make one', async () => {
        const pageUrl = url();
        // Every request this page made through all the tests above (Playwright's request events): only its own
        // document; and the route that refuses any other request never had one to refuse.
        expect(guarded.requests.filter((r) => r !== pageUrl)).toEqual([]);
        expect(guarded.requests.length).toBeGreaterThan(0);
        expect(guarded.refused).toEqual([]);
        // And it cannot make one: the policy blocks a fetch and an image before they leave the browser.
        const before = served.length;
        const blocked = await evaluate<string>(
          page,
          `fetch(${JSON.stringify(`${base}/probe`)}).then(() => 'sent', (e) => 'blocked: ' + e.name)`,
        );
        expect(blocked).toBe('blocked: TypeError');
        const img = await evaluate<string>(
          page,
          `new Promise((r) => { const i = new Image(); i.onload = () => r('loaded'); i.onerror = () => r('blocked'); i.src = ${JSON.stringify(`${base}/probe.png`)}; })`,
        );
        expect(img).toBe('blocked');
        expect(served.slice(before)).toEqual([]);
        // Chromium reports the image as a request, failed by the CSP before it left (the fetch not even that):
        // nothing but the page was answered, nothing reached the route.
        expect(guarded.answered.filter((r) => r !== pageUrl)).toEqual([]);
        for (const r of guarded.requests.filter((x) => x !== pageUrl)) {
          expect(guarded.failed.find((f) => f.url === r)?.error, r).toMatch(/BLOCKED_BY_CSP|csp/i);
        }
        expect(guarded.refused).toEqual([]);
        if (where === 'loopback') expect(served.every((s) => s === 'GET /inspect')).toBe(true);
      }, 60_000);
    });
  }

  it('reads a 100 MiB package in pieces and stays responsive; reports its time against oapp verify', async () => {
    const big = join(dir, 'big.oapp');
    const size = 100 * MIB;
    const fd = openSync(big, 'w');
    try {
      const piece = new Uint8Array(MIB).fill(0x61);
      await writePackage(
        {
          packageId: 'hello-app',
          packagerSecretKey: keys.packager.secretKey,
          recipients: [keys.deployment.publicKey as Key],
          signers: [{ secretKey: keys.author.secretKey, signText: 'release 1' }],
          contentSize: size,
          content: (function* () {
            for (let n = 0; n < size / MIB; n++) yield piece;
          })(),
          chunkSize: MIB,
        },
        { write: (bytes, position) => void writeSync(fd, bytes, 0, bytes.length, position) },
      );
    } finally {
      closeSync(fd);
    }
    const b = file('big-bootstrap.json', bootstrap(keys, {}, big));
    const guarded = await guardedContext(browser, () => `${base}/inspect`);
    const page = await guarded.context.newPage();
    try {
      await page.goto(`${base}/inspect`);
      await waitFor(page, `document.body.dataset.state === 'ready'`);
      await evaluate(
        page,
        `document.getElementById('policy').value = ${JSON.stringify(readFileSync(b, 'utf8'))}, undefined`,
      );
      const t0 = performance.now();
      await page.setInputFiles('#file', [big]);
      // While the payload is hashed the page answers: each evaluation below is a task between two pieces.
      let answeredMidway = 0;
      const seen = new Set<number>();
      for (;;) {
        const p = await evaluate<{ state: string; value: number; hidden: boolean }>(
          page,
          `({ state: document.body.dataset.state, value: document.getElementById('progress').value, hidden: document.getElementById('progress').hidden })`,
        );
        if (p.state === 'done') break;
        if (!p.hidden && p.value > 0 && p.value < 1) {
          answeredMidway++;
          seen.add(Math.floor(p.value * 10));
        }
        await new Promise((r) => setTimeout(r, 5));
      }
      const pageMs = performance.now() - t0;
      const s = await evaluate<Shown>(page, READ_PAGE);
      expect(s.rows['payload hash']).toMatch(/^matches the HEADER/);
      expect(s.verdict).toMatch(/^ACCEPTED/);
      expect(answeredMidway).toBeGreaterThan(1);
      expect(seen.size).toBeGreaterThan(1);
      const t1 = performance.now();
      expect(await cliCodes(big, policyFlags(keys, dir, {}))).toEqual([]);
      const cliMs = performance.now() - t1;
      console.log(
        `100 MiB package: the page ${Math.round(pageMs)} ms (inspect, payload hash, policy), oapp verify ${Math.round(cliMs)} ms (process start included; it reads no payload)`,
      );
      // Read in the browser, never sent: the page made no request but for itself.
      expect(guarded.requests).toEqual([`${base}/inspect`]);
      expect(guarded.refused).toEqual([]);
    } finally {
      await guarded.context.close();
      rmSync(big, { force: true });
    }
  }, 300_000);
});
