// Regenerates testdata/vectors/ and testdata/negative/ from fixed seeds:
//   pnpm --filter @org/oapp-format generate
// Never edit the outputs by hand; CI regenerates them and fails on any difference.
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { boxEasy, decodeHex, encodeBase64, encodeHex, keyToHex, sha256 } from '@org/envelope-crypto';
import { assemblePackage, buildStatement } from '../src/create.js';
import { writerRelease } from '../src/release.js';
import { signStatement } from '../src/signatures.js';
import { encodeStatement } from '../src/statement.js';
import * as fx from '../test/fixtures.js';
import { concat } from '../test/package-surgery.js';
import { MINIMAL, SIGNERS, base, negativeCases } from './negative-cases.js';
import { ADMINS, ADMIN_SIGNERS, ADMIN_THRESHOLD, FAR_EXPIRY, PLAIN_BOOTSTRAP, V2_SEQUENCE, base2, negativeV2Cases, type NegativeInputs } from './negative-v2-cases.js';
import { signBootstrap } from '../src/bootstrap-signature.js';
import { seeded, type RogueOptions } from './rogue.js';
import { withWorkedExample } from './worked-example.js';
import { IDENTITY, P, le32, nonCanonicalPointEncoding } from './ed25519-edges.js';
import { displayText } from '../src/display.js';

const here = dirname(fileURLToPath(import.meta.url));
// Optional argument: another output folder (the vectors test regenerates into a temporary one and compares).
const outDir = process.argv[2] ?? here;
const VECTORS = join(outDir, 'vectors');
const NEGATIVE = join(outDir, 'negative');
export const MULTI_CONTENT = seeded('multichunk content')(3000);

/** Valid vectors come from the production writer (assemblePackage) with a seeded random source. */
function valid(o: RogueOptions): Uint8Array {
  const kind = o.kind ?? 'app';
  const version = o.version ?? 1;
  const release = writerRelease({ formatVersion: version, createdAt: o.createdAt, sequence: o.sequence, expiresAt: o.expiresAt });
  const statement = buildStatement(kind, o.packageId ?? 'hello-app', o.content, undefined, release);
  const statementBytes = encodeStatement(statement);
  return assemblePackage({
    kind,
    statement,
    statementBytes,
    signatures: o.signers.map((s) => signStatement(kind, statementBytes, s.pair.secretKey, s.text, version)),
    content: o.content,
    packagerSecretKey: o.packager.secretKey,
    recipients: o.recipients.map((r) => r.publicKey),
    createdAt: o.createdAt,
    chunkSize: o.chunkSize,
    random: seeded(o.seed),
  });
}

const BOOTSTRAP = new TextEncoder().encode('[{"deploymentId":"d1","remoteConfiguration":"app.oapp"}]');
/** The release fields a vector's reader reports (vectors.json). */
const V1 = { formatVersion: 1, sequence: null, expiresAt: null };
const v2 = (sequence: number, expiresAt: string | null = null) => ({ formatVersion: 2, sequence, expiresAt });

function writeVectors() {
  const v = {
    // Format v1 (frozen; still read)
    'app-minimal.oapp': { bytes: valid(base('app-minimal')), content: MINIMAL, kind: 'app', release: V1 },
    'app-multichunk.oapp': {
      bytes: valid(base('app-multichunk', { content: MULTI_CONTENT, recipients: [fx.otherDeployment, fx.deployment] })),
      content: MULTI_CONTENT,
      kind: 'app',
      release: V1,
    },
    'app-empty.oapp': { bytes: valid(base('app-empty', { content: new Uint8Array(0) })), content: new Uint8Array(0), kind: 'app', release: V1 },
    'bootstrap.oapp': {
      bytes: valid(base('bootstrap', { kind: 'bootstrap', packageId: 'bootstrap', content: BOOTSTRAP, signers: [] })),
      content: BOOTSTRAP,
      kind: 'bootstrap',
      release: V1,
    },
    // Format v2
    'v2-app-minimal.oapp': { bytes: valid(base2('v2-app-minimal')), content: MINIMAL, kind: 'app', release: v2(V2_SEQUENCE) },
    'v2-app-multichunk.oapp': {
      bytes: valid(base2('v2-app-multichunk', { sequence: 8, content: MULTI_CONTENT, recipients: [fx.otherDeployment, fx.deployment] })),
      content: MULTI_CONTENT,
      kind: 'app',
      release: v2(8),
    },
    'v2-app-expiring.oapp': {
      bytes: valid(base2('v2-app-expiring', { sequence: 9, expiresAt: FAR_EXPIRY })),
      content: MINIMAL,
      kind: 'app',
      release: v2(9, FAR_EXPIRY.toISOString()),
    },
    'v2-bootstrap-signed.oapp': {
      bytes: valid(base2('v2-bootstrap-signed', { kind: 'bootstrap', packageId: 'bootstrap', content: PLAIN_BOOTSTRAP, signers: ADMIN_SIGNERS, sequence: 3, chunkSize: 65536 })),
      content: PLAIN_BOOTSTRAP,
      kind: 'bootstrap',
      release: v2(3),
    },
  };
  for (const [name, x] of Object.entries(v)) writeFileSync(join(VECTORS, name), x.bytes);
  writeFileSync(join(VECTORS, 'bootstrap.b64'), encodeBase64(v['bootstrap.oapp'].bytes) + '\n');
  writeFileSync(join(VECTORS, 'v2-bootstrap-signed.b64'), encodeBase64(v['v2-bootstrap-signed.oapp'].bytes) + '\n');
  // A plain bootstrap and its detached signature by both administrators (SPEC.md §9.2).
  writeFileSync(join(VECTORS, 'bootstrap.json'), PLAIN_BOOTSTRAP);
  writeFileSync(
    join(VECTORS, 'bootstrap.json.sig'),
    signBootstrap(PLAIN_BOOTSTRAP, {
      signers: ADMIN_SIGNERS.map((s) => ({ secretKey: s.pair.secretKey, signText: s.text })),
      createdAt: fx.FIXED_TIME,
      sequence: 3,
      expiresAt: FAR_EXPIRY,
    }),
  );
  return v;
}

function writeString(): { text: string; plaintext: string } {
  const nonce = seeded('string')(24);
  const plaintext = 's3cr3t client value';
  const box = boxEasy(new TextEncoder().encode(plaintext), nonce, fx.deployment.publicKey.bytes, fx.vendorPackager.secretKey.bytes);
  const text = '-2/' + encodeBase64(concat([nonce, box]));
  writeFileSync(join(VECTORS, 'string.txt'), text + '\n');
  return { text, plaintext };
}

function keyEntry(p: fx.Pair) {
  return { id: p.id, purpose: p.publicKey.purpose, publicKeyHex: keyToHex(p.publicKey), secretKeyHex: keyToHex(p.secretKey) };
}

function writeIndex(
  vectors: ReturnType<typeof writeVectors>,
  str: ReturnType<typeof writeString>,
  negativeInputs: Record<string, NegativeInputs>,
): void {
  const pairs = [fx.vendorPackager, fx.customerPackager, fx.deployment, fx.otherDeployment, fx.vendorSigner, fx.customerSigner, fx.reviewerA, fx.reviewerB, fx.reviewerC, fx.adminA, fx.adminB];
  const index = {
    comment: 'Test keys only. Regenerate with: pnpm --filter @org/oapp-format generate',
    keys: pairs.map(keyEntry),
    policy: {
      packageId: 'hello-app',
      packagerIdentities: [fx.vendorPackager.id],
      requiredSigners: [fx.vendorSigner.id],
      additionalSigners: [fx.reviewerA.id, fx.reviewerB.id, fx.reviewerC.id],
      requiredAdditionalSignerCount: 2,
    },
    recipient: fx.deployment.id,
    vectors: Object.fromEntries(
      Object.entries(vectors).map(([name, x]) => [
        name,
        { kind: x.kind, contentSha256: encodeHex(sha256(x.content)), contentSize: x.content.length, createdAt: fx.FIXED_TIME.toISOString(), ...x.release },
      ]),
    ),
    bootstrap: { file: 'bootstrap.b64', agentBootstrapSecretKey: `${keyToHex(fx.vendorPackager.publicKey)}/${keyToHex(fx.deployment.secretKey)}` },
    administrators: { keys: ADMINS.map((a) => a.id), threshold: ADMIN_THRESHOLD },
    signedBootstrap: { file: 'v2-bootstrap-signed.b64', vector: 'v2-bootstrap-signed.oapp' },
    plainBootstrap: {
      file: 'bootstrap.json',
      signature: 'bootstrap.json.sig',
      contentSha256: encodeHex(sha256(PLAIN_BOOTSTRAP)),
      sequence: 3,
      createdAt: fx.FIXED_TIME.toISOString(),
      expiresAt: FAR_EXPIRY.toISOString(),
    },
    negativeInputs,
    acceptedWithInputs: acceptedWithInputs(encodeHex(sha256(vectors['v2-app-minimal.oapp'].content))),
    string: { file: 'string.txt', plaintext: str.plaintext, agentStringSecretKeys: `${keyToHex(fx.vendorPackager.publicKey)}/${keyToHex(fx.deployment.secretKey)}` },
    signers: SIGNERS.map((s) => ({ id: s.pair.id, signText: s.text })),
  };
  writeFileSync(join(VECTORS, 'vectors.json'), JSON.stringify(index, null, 2) + '\n');
}

/**
 * Valid files opened with verifier inputs (SPEC.md §6.1, §14) that sit on a boundary of step 13a: each MUST be
 * accepted, a `.oapp` with the listed verdict.
 */
function acceptedWithInputs(minimalSha256: string): { file: string; inputs: NegativeInputs; verdict?: string }[] {
  const atSkew = { now: '2100-01-01T00:05:00.000Z' }; // expiresAt + the default 300 s, inclusive
  const atExpiry = { now: '2100-01-01T00:00:00.000Z', clockSkewSeconds: 0 };
  return [
    { file: 'v2-app-expiring.oapp', inputs: { freshness: atSkew }, verdict: 'first' },
    { file: 'v2-app-expiring.oapp', inputs: { freshness: atExpiry }, verdict: 'first' },
    { file: 'bootstrap.json.sig', inputs: { freshness: atSkew } },
    { file: 'bootstrap.json.sig', inputs: { freshness: atExpiry } },
    // 13a.3: the allowed sequence equal to the newest's, with other content, waives POLICY_SEQUENCE_REUSED.
    {
      file: 'v2-app-minimal.oapp',
      inputs: { freshness: { newest: { sequence: V2_SEQUENCE, contentSha256: 'ab'.repeat(32) }, allowSequence: V2_SEQUENCE } },
      verdict: 'allowed-downgrade',
    },
    // The floor equal to the sequence, and the same release again (the newest's hex in capitals).
    {
      file: 'v2-app-minimal.oapp',
      inputs: { minimumSequence: V2_SEQUENCE, freshness: { newest: { sequence: V2_SEQUENCE, contentSha256: minimalSha256.toUpperCase() } } },
      verdict: 'same',
    },
  ];
}

const withTopBit = (b: Uint8Array) => {
  const c = b.slice();
  c[31]! |= 0x80;
  return c;
};

/**
 * SPEC.md §2 (S176): public keys and the one code each gets in every position (key text, a policy list, HEADER
 * `packager`, a writer's recipient; the last two for X25519 only). `null`: accepted.
 */
function writePublicKeys(): void {
  const x = (name: string, bytes: Uint8Array, code: string | null) => ({ name, purpose: 'authenticated', keyHex: encodeHex(bytes), code });
  const e = (name: string, bytes: Uint8Array, code: string | null) => ({ name, purpose: 'sign', keyHex: encodeHex(bytes), code });
  const order8 = decodeHex('e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800', 32);
  const keys = [
    x('vendor packager', fx.vendorPackager.publicKey.bytes, null),
    x('u = p - 2 (the largest canonical value that is not weak)', le32(P - 2n), null),
    x('vendor packager with bit 255 set (an alias of it for X25519)', withTopBit(fx.vendorPackager.publicKey.bytes), 'CRYPTO_INVALID_PUBLIC_KEY'),
    x('u = p + 2', le32(P + 2n), 'CRYPTO_INVALID_PUBLIC_KEY'),
    x('u = p + 18', le32(P + 18n), 'CRYPTO_INVALID_PUBLIC_KEY'),
    x('u = 2^255 - 1', le32(2n ** 255n - 1n), 'CRYPTO_INVALID_PUBLIC_KEY'),
    x('all bits set', le32(2n ** 256n - 1n), 'CRYPTO_INVALID_PUBLIC_KEY'),
    x('all zero', new Uint8Array(32), 'CRYPTO_WEAK_KEY'),
    x('u = p - 1 (order 2)', le32(P - 1n), 'CRYPTO_WEAK_KEY'),
    x('u = p (weak and not canonical: weak decides)', le32(P), 'CRYPTO_WEAK_KEY'),
    x('u = p + 1 (weak and not canonical: weak decides)', le32(P + 1n), 'CRYPTO_WEAK_KEY'),
    x('order 8 with bit 255 set (weak decides)', withTopBit(order8), 'CRYPTO_WEAK_KEY'),
    e('vendor signer', fx.vendorSigner.publicKey.bytes, null),
    e('identity, y = 1 (order 1)', IDENTITY, 'CRYPTO_WEAK_KEY'),
    e('y = p + 1 (the identity, not canonical: canonical decides)', le32(P + 1n), 'CRYPTO_INVALID_PUBLIC_KEY'),
    e('a point of large order with y >= p', nonCanonicalPointEncoding(), 'CRYPTO_INVALID_PUBLIC_KEY'),
  ];
  const doc = {
    comment: 'SPEC.md §2: each key gets this one code wherever it appears. Regenerate with: pnpm --filter @org/oapp-format generate',
    keys,
  };
  writeFileSync(join(VECTORS, 'public-keys.json'), JSON.stringify(doc, null, 2) + '\n');
}

/** SPEC.md §6.4 (S178): untrusted strings and their display form. */
function writeDisplay(): void {
  const inputs = [
    'hello-app',
    'caf\u00e9 \u6f22\u5b57 \u{1F600}',
    'a"b\\c',
    'line\nbreak\ttab\u0000nul\u001besc[31m',
    'del\u007f c1\u0085\u009b',
    'bidi \u202eevil.exe\u202c \u2066iso\u2069 \u200e\u200f \u061c',
    'zero\u200bwidth\u200c\u200d\u2060\ufeff',
    'separators\u2028\u2029',
    'not escaped: no-break\u00a0space, soft\u00adhyphen',
    'looks escaped: \\u{202E}',
  ];
  const doc = {
    comment: 'SPEC.md §6.4: input (a JSON string) and its display form. Regenerate with: pnpm --filter @org/oapp-format generate',
    cases: inputs.map((input) => ({ input, display: displayText(input) })),
  };
  // Every non-ASCII character escaped, so the file itself holds no raw bidi or invisible character.
  const ascii = JSON.stringify(doc, null, 2).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  writeFileSync(join(VECTORS, 'display.json'), ascii + '\n');
}

for (const dir of [VECTORS, NEGATIVE]) {
  mkdirSync(dir, { recursive: true });
  for (const f of readdirSync(dir)) rmSync(join(dir, f));
}
const vectors = writeVectors();
const cases = negativeCases(vectors['app-minimal.oapp'].bytes, vectors['app-multichunk.oapp'].bytes, MULTI_CONTENT);
for (const [name, bytes] of Object.entries(cases)) writeFileSync(join(NEGATIVE, `${name}.oapp`), bytes);
const v2Cases = negativeV2Cases(vectors['v2-app-minimal.oapp'].bytes);
const negativeInputs: Record<string, NegativeInputs> = {};
for (const [name, c] of Object.entries(v2Cases)) {
  const file = `${name}.${c.ext}`;
  if (Object.hasOwn(cases, name)) throw new Error(`generator: ${name} is in both corpora`);
  writeFileSync(join(NEGATIVE, file), c.bytes);
  if (c.inputs !== undefined) negativeInputs[file] = c.inputs;
}
writeIndex(vectors, writeString(), negativeInputs);
writePublicKeys();
writeDisplay();
// SPEC.md §12 is rendered from the v2 vector; only when generating in place.
if (outDir === here) {
  const specPath = join(here, '..', 'SPEC.md');
  writeFileSync(specPath, withWorkedExample(readFileSync(specPath, 'utf8'), vectors['v2-app-minimal.oapp'].bytes));
}
console.log(`wrote ${Object.keys(vectors).length} vectors and ${Object.keys(cases).length + Object.keys(v2Cases).length} negative files`);
