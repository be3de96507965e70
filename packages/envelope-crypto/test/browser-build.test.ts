// The browser build (package.json `exports` condition "browser", tsup.browser.config.ts, ADR 0146): it names no
// Node built-in, sodium-native or global Buffer, runs the noble engine, and gives the same bytes and the same
// refusals as the Node entry. Reads dist/browser/index.js: run `pnpm --filter @org/envelope-crypto build` first.
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import * as node from '../src/index.js';

const file = fileURLToPath(new URL('../dist/browser/index.js', import.meta.url));
type Lib = typeof node;
let browser: Lib;

beforeAll(async () => {
  if (!existsSync(file))
    throw new Error(`${file} is missing: run \`pnpm --filter @org/envelope-crypto build\``);
  browser = (await import(file)) as Lib;
});

/** Runs `fn` with no global Buffer, as in a browser. */
function withoutBuffer<T>(fn: () => T): T {
  const g = globalThis as { Buffer?: unknown };
  const saved = g.Buffer;
  delete g.Buffer;
  try {
    return fn();
  } finally {
    g.Buffer = saved;
  }
}

const bytes = (n: number, seed: number) => Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed) & 0xff);
const codeOf = (fn: () => unknown): unknown => {
  try {
    fn();
    return 'no error';
  } catch (err) {
    return (err as { code?: unknown }).code ?? (err as Error).name;
  }
};

describe('the browser build of @org/envelope-crypto', () => {
  it('imports only @noble/* and names no Node built-in, sodium-native, require or global Buffer', () => {
    const text = readFileSync(file, 'utf8');
    const specifiers = [...text.matchAll(/\b(?:from|import)\s*\(?\s*["']([^"']+)["']/g)].map((m) => m[1]);
    expect(specifiers.length).toBeGreaterThan(0);
    for (const s of specifiers) expect(s).toMatch(/^@noble\//);
    expect(text).not.toMatch(/node:|sodium-native|\brequire\(|import\.meta|globalThis\.Buffer/);
    // The one `Buffer` is the bundle's own module (src/browser/buffer.ts), declared in it.
    expect(text).toMatch(/\bvar Buffer = \{/);
  });

  it('the package.json sends a bundler that sets "browser" to it, first, and Node to the Node entry', () => {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
      exports: Record<string, Record<string, unknown>>;
    };
    const dot = pkg.exports['.']!;
    expect(Object.keys(dot)[0]).toBe('browser');
    expect(dot.browser).toEqual({ types: './dist/index.d.ts', default: './dist/browser/index.js' });
  });

  it('runs the js (noble) engine and exports the same names as the Node entry', () => {
    expect(browser.defaultEngine()).toBe('js');
    expect(Object.keys(browser).sort()).toEqual(Object.keys(node).sort());
  });

  it('hashes and derives keys as the Node entry does', { timeout: 20_000 }, () => {
    const seed = bytes(32, 1);
    const ikm = bytes(40, 2);
    withoutBuffer(() => {
      expect(browser.sha256(ikm)).toEqual(node.sha256(ikm));
      const a = browser.createSha256();
      a.update(ikm.subarray(0, 7));
      a.update(ikm.subarray(7));
      expect(a.digest()).toEqual(node.sha256(ikm));
      expect(browser.hkdfSha256(ikm, bytes(16, 3), bytes(9, 4), 64)).toEqual(
        node.hkdfSha256(ikm, bytes(16, 3), bytes(9, 4), 64),
      );
      expect(browser.ed25519PublicFromSeed(seed)).toEqual(node.ed25519PublicFromSeed(seed));
      expect(browser.x25519PublicFromSecret(seed)).toEqual(node.x25519PublicFromSecret(seed));
    });
  });

  it(
    'signs, seals and opens with the same bytes as the Node entry, and opens what Node sealed',
    { timeout: 20_000 },
    () => {
      const seed = bytes(32, 5);
      const msg = bytes(1000, 6);
      const signSecret = new Uint8Array([...seed, ...node.ed25519PublicFromSeed(seed)]);
      const alice = bytes(32, 7);
      const bob = bytes(32, 8);
      const bobPublic = node.x25519PublicFromSecret(bob);
      const alicePublic = node.x25519PublicFromSecret(alice);
      const key = bytes(32, 9);
      const sealed = node.sealedBoxSeal(msg, bobPublic);
      const nodeString = node.encryptString(
        msg.subarray(0, 100),
        node.keyFromBytes('authenticated', 'public', bobPublic),
        node.keyFromBytes('authenticated', 'secret', alice),
      );
      withoutBuffer(() => {
        const sig = browser.signDetached(msg, signSecret);
        expect(sig).toEqual(node.signDetached(msg, signSecret));
        expect(browser.verifyDetached(sig, msg, node.ed25519PublicFromSeed(seed))).toBe(true);
        const aead = browser.aeadEncrypt(key, bytes(12, 10), msg, bytes(5, 11));
        expect(aead).toEqual(node.aeadEncrypt(key, bytes(12, 10), msg, bytes(5, 11)));
        expect(browser.aeadDecrypt(key, bytes(12, 10), aead, bytes(5, 11))).toEqual(msg);
        expect(browser.secretboxEasy(msg, bytes(24, 12), key)).toEqual(
          node.secretboxEasy(msg, bytes(24, 12), key),
        );
        const box = browser.boxEasy(msg, bytes(24, 13), bobPublic, alice);
        expect(box).toEqual(node.boxEasy(msg, bytes(24, 13), bobPublic, alice));
        expect(browser.boxOpenEasy(box, bytes(24, 13), alicePublic, bob)).toEqual(msg);
        expect(browser.sealedBoxOpen(sealed, bobPublic, bob)).toEqual(msg);
        expect(
          browser.decryptString(nodeString, [{ senderPublicKey: alicePublic, recipientSecretKey: bob }]),
        ).toEqual(msg.subarray(0, 100));
        expect(browser.randomBytes(70_000).some((x) => x !== 0)).toBe(true);
      });
    },
  );

  it('encodes Base64 and hex as the Node entry does, and refuses what it refuses with the same code', () => {
    const b = bytes(37, 14);
    const badBase64 = ['QR==', 'QUF=', 'QUJDRB==', 'AB==', 'QQ', 'QQ=', 'Q===', 'QQ==\n', '-_8=', 'QQ== '];
    const badHex = ['abc', 'zz', '0x00', 'AB', ' ab', 'abcd'];
    const badUtf8 = Uint8Array.of(0xff, 0xfe);
    const expected = {
      base64: node.encodeBase64(b),
      hex: node.encodeHex(b),
      base64Codes: badBase64.map((t) => codeOf(() => node.decodeBase64(t))),
      hexCodes: badHex.map((t) => codeOf(() => node.decodeHex(t, 1))),
      utf8Code: codeOf(() => node.decodeUtf8(badUtf8)),
    };
    expect(new Set(expected.base64Codes)).toEqual(new Set(['CRYPTO_BAD_BASE64']));
    const actual = withoutBuffer(() => ({
      base64: browser.encodeBase64(b),
      hex: browser.encodeHex(b),
      base64Codes: badBase64.map((t) => codeOf(() => browser.decodeBase64(t))),
      hexCodes: badHex.map((t) => codeOf(() => browser.decodeHex(t, 1))),
      utf8Code: codeOf(() => browser.decodeUtf8(badUtf8)),
      roundTrip: [browser.decodeBase64(expected.base64), browser.decodeHex(expected.hex)],
    }));
    expect(actual).toEqual({ ...expected, roundTrip: [b, b] });
  });
});
