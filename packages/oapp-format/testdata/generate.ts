// Regenerates testdata/vectors/ and testdata/negative/ from fixed seeds:
//   pnpm --filter @org/oapp-format generate
// Never edit the outputs by hand; CI regenerates them and fails on any difference.
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { boxEasy, encodeBase64, encodeHex, keyToHex, sha256 } from '@org/envelope-crypto';
import { assemblePackage, buildStatement } from '../src/create.js';
import { signStatement } from '../src/signatures.js';
import { encodeStatement } from '../src/statement.js';
import * as fx from '../test/fixtures.js';
import { concat } from '../test/package-surgery.js';
import { MINIMAL, SIGNERS, base, negativeCases } from './negative-cases.js';
import { seeded, type RogueOptions } from './rogue.js';
import { withWorkedExample } from './worked-example.js';

const here = dirname(fileURLToPath(import.meta.url));
// Optional argument: another output folder (the vectors test regenerates into a temporary one and compares).
const outDir = process.argv[2] ?? here;
const VECTORS = join(outDir, 'vectors');
const NEGATIVE = join(outDir, 'negative');
export const MULTI_CONTENT = seeded('multichunk content')(3000);

/** Valid vectors come from the production writer (assemblePackage) with a seeded random source. */
function valid(o: RogueOptions): Uint8Array {
  const kind = o.kind ?? 'app';
  const statement = buildStatement(kind, o.packageId ?? 'hello-app', o.content);
  const statementBytes = encodeStatement(statement);
  return assemblePackage({
    kind,
    statement,
    statementBytes,
    signatures: o.signers.map((s) => signStatement(kind, statementBytes, s.pair.secretKey, s.text)),
    content: o.content,
    packagerSecretKey: o.packager.secretKey,
    recipients: o.recipients.map((r) => r.publicKey),
    createdAt: o.createdAt,
    chunkSize: o.chunkSize,
    random: seeded(o.seed),
  });
}

const BOOTSTRAP = new TextEncoder().encode('[{"deploymentId":"d1","remoteConfiguration":"app.oapp"}]');

function writeVectors() {
  const v = {
    'app-minimal.oapp': { bytes: valid(base('app-minimal')), content: MINIMAL, kind: 'app' },
    'app-multichunk.oapp': {
      bytes: valid(base('app-multichunk', { content: MULTI_CONTENT, recipients: [fx.otherDeployment, fx.deployment] })),
      content: MULTI_CONTENT,
      kind: 'app',
    },
    'app-empty.oapp': { bytes: valid(base('app-empty', { content: new Uint8Array(0) })), content: new Uint8Array(0), kind: 'app' },
    'bootstrap.oapp': {
      bytes: valid(base('bootstrap', { kind: 'bootstrap', packageId: 'bootstrap', content: BOOTSTRAP, signers: [] })),
      content: BOOTSTRAP,
      kind: 'bootstrap',
    },
  };
  for (const [name, x] of Object.entries(v)) writeFileSync(join(VECTORS, name), x.bytes);
  writeFileSync(join(VECTORS, 'bootstrap.b64'), encodeBase64(v['bootstrap.oapp'].bytes) + '\n');
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

function writeIndex(vectors: ReturnType<typeof writeVectors>, str: ReturnType<typeof writeString>): void {
  const pairs = [fx.vendorPackager, fx.customerPackager, fx.deployment, fx.otherDeployment, fx.vendorSigner, fx.customerSigner, fx.reviewerA, fx.reviewerB, fx.reviewerC];
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
      Object.entries(vectors).map(([name, x]) => [name, { kind: x.kind, contentSha256: encodeHex(sha256(x.content)), contentSize: x.content.length }]),
    ),
    bootstrap: { file: 'bootstrap.b64', agentBootstrapSecretKey: `${keyToHex(fx.vendorPackager.publicKey)}/${keyToHex(fx.deployment.secretKey)}` },
    string: { file: 'string.txt', plaintext: str.plaintext, agentStringSecretKeys: `${keyToHex(fx.vendorPackager.publicKey)}/${keyToHex(fx.deployment.secretKey)}` },
    signers: SIGNERS.map((s) => ({ id: s.pair.id, signText: s.text })),
  };
  writeFileSync(join(VECTORS, 'vectors.json'), JSON.stringify(index, null, 2) + '\n');
}

for (const dir of [VECTORS, NEGATIVE]) {
  mkdirSync(dir, { recursive: true });
  for (const f of readdirSync(dir)) rmSync(join(dir, f));
}
const vectors = writeVectors();
writeIndex(vectors, writeString());
const cases = negativeCases(vectors['app-minimal.oapp'].bytes, vectors['app-multichunk.oapp'].bytes, MULTI_CONTENT);
for (const [name, bytes] of Object.entries(cases)) writeFileSync(join(NEGATIVE, `${name}.oapp`), bytes);
// SPEC.md §12 is rendered from the vector; only when generating in place.
if (outDir === here) {
  const specPath = join(here, '..', 'SPEC.md');
  writeFileSync(specPath, withWorkedExample(readFileSync(specPath, 'utf8'), vectors['app-minimal.oapp'].bytes));
}
console.log(`wrote ${Object.keys(vectors).length} vectors and ${Object.keys(cases).length} negative files`);
