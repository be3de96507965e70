// The browser build (package.json `exports` condition "browser", tsup.browser.config.ts, ADR 0146): it imports
// only @org/envelope-crypto (whose own browser build a bundler then takes), names no Node built-in, sodium-native
// or global Buffer, and behaves as the Node entry. Reads dist/browser/index.js: run
// `pnpm --filter @org/oapp-format build` first. Here its @org/envelope-crypto import resolves to that package's
// Node entry (which needs Node's Buffer), so this compares this library's own code; that package's
// test/browser-build.test.ts compares its two builds, and apps/inspect-page runs both browser builds in Chromium.
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import * as node from '../src/index.js';
import { FIXED_TIME, WORKFLOW, deployment, vendorPackager, vendorPolicy, vendorSigner } from './fixtures.js';

const file = fileURLToPath(new URL('../dist/browser/index.js', import.meta.url));
type Lib = typeof node;
let browser: Lib;

beforeAll(async () => {
  if (!existsSync(file)) throw new Error(`${file} is missing: run \`pnpm --filter @org/oapp-format build\``);
  browser = (await import(file)) as Lib;
});

const codeOf = (fn: () => unknown): unknown => {
  try {
    fn();
    return 'no error';
  } catch (err) {
    return (err as { code?: unknown }).code ?? (err as Error).name;
  }
};

const createOptions = (signText: string) => ({
  packageId: 'hello-app',
  content: WORKFLOW,
  packagerSecretKey: vendorPackager.secretKey,
  recipients: [deployment.publicKey],
  signers: [{ secretKey: vendorSigner.secretKey, signText }],
  createdAt: FIXED_TIME,
});

describe('the browser build of @org/oapp-format', () => {
  it('imports only @org/envelope-crypto and names no Node built-in, sodium-native, require or global Buffer', () => {
    const text = readFileSync(file, 'utf8');
    const specifiers = [...text.matchAll(/\b(?:from|import)\s*\(?\s*["']([^"']+)["']/g)].map((m) => m[1]);
    expect(specifiers.length).toBeGreaterThan(0);
    for (const s of specifiers) expect(s).toBe('@org/envelope-crypto');
    expect(text).not.toMatch(/node:|sodium-native|\brequire\(|import\.meta|globalThis\.Buffer/);
    // The one `Buffer` is the bundle's own module (src/browser/buffer.ts), declared in it.
    expect(text).toMatch(/\bvar Buffer = \{/);
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
      exports: Record<string, Record<string, unknown>>;
    };
    expect(Object.keys(pkg.exports['.']!)[0]).toBe('browser');
    expect(pkg.exports['.']!.browser).toEqual({
      types: './dist/index.d.ts',
      default: './dist/browser/index.js',
    });
  });

  it('exports the same names as the Node entry', () => {
    expect(Object.keys(browser).sort()).toEqual(Object.keys(node).sort());
  });

  it('opens and inspects what the Node entry sealed, and the Node entry opens what it sealed', async () => {
    const sealedByNode = node.createPackage(createOptions('ok'));
    const opts = { policy: vendorPolicy(), recipientSecretKey: deployment.secretKey };
    const expectedInspection = await node.inspectPackage(sealedByNode, { policy: vendorPolicy() });
    const opened = await browser.openPackage(sealedByNode, opts);
    const inspection = await browser.inspectPackage(sealedByNode, { policy: vendorPolicy() });
    const sealedByBrowser = browser.createPackage(createOptions('ok'));
    expect(opened.content).toEqual(WORKFLOW);
    expect(inspection).toEqual(expectedInspection);
    // Fresh keys and nonces differ; the magic and version prefix, the opened content and the signers do not.
    expect(sealedByBrowser.subarray(0, 8)).toEqual(sealedByNode.subarray(0, 8));
    const reopened = await node.openPackage(sealedByBrowser, opts);
    expect(reopened.content).toEqual(WORKFLOW);
    expect(reopened.signers).toEqual(opened.signers);
  }, 20_000);

  it('counts UTF-8 bytes of a field as the Node entry does (the injected Buffer.byteLength)', () => {
    const atLimit = 'é'.repeat(node.MAX_SIGN_TEXT_BYTES / 2);
    const over = `${atLimit}e`;
    const expected = [atLimit, over].map((t) => codeOf(() => node.createPackage(createOptions(t))));
    expect(expected).toEqual(['no error', 'FORMAT_BAD_ARGUMENT']);
    const actual = [atLimit, over].map((t) => codeOf(() => browser.createPackage(createOptions(t))));
    expect(actual).toEqual(expected);
    expect(browser.fingerprint(deployment.publicKey.bytes)).toBe(
      node.fingerprint(deployment.publicKey.bytes),
    );
  }, 20_000);
});
