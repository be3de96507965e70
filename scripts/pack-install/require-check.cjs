// Run in the scratch project by scripts/pack-install-check.sh after api-check.mjs: `node require-check.cjs`.
// CommonJS consumers: `require()` of every entry api-check.mjs imported gives the same export names, and a round
// trip through the CommonJS builds (a -2/ string, a package created and opened, a workflow compiled) works.
'use strict';
const { readFileSync } = require('node:fs');

const esm = JSON.parse(readFileSync('esm-exports.json', 'utf8'));
const problems = [];
for (const [entry, names] of Object.entries(esm)) {
  const resolved = require.resolve(entry);
  if (!resolved.endsWith('.cjs')) problems.push(`${entry}: require resolves to ${resolved}, not a .cjs file`);
  const keys = Object.keys(require(entry))
    .filter((k) => k !== '__esModule')
    .sort();
  if (JSON.stringify(keys) !== JSON.stringify(names)) {
    problems.push(`${entry}: require() exports [${keys.join(', ')}], import() [${names.join(', ')}]`);
  }
}

async function roundTrip() {
  const ec = require('@org/envelope-crypto');
  const of = require('@org/oapp-format');
  const wc = require('@org/workflow-compiler');
  const packager = ec.generateKeyPair('authenticated');
  const deployment = ec.generateKeyPair('authenticated');
  const signer = ec.generateKeyPair('sign');
  const text = ec.encryptString(ec.encodeUtf8('s3cret'), deployment.publicKey, packager.secretKey);
  const tuple = ec.parseKeyTuple(`${ec.keyToHex(packager.publicKey)}/${ec.keyToHex(deployment.secretKey)}`);
  if (ec.decodeUtf8(ec.decryptString(text, [tuple])) !== 's3cret') throw new Error('-2/ string round trip');
  const { workflow } = await wc.compileWorkflow('{"workflows":[{"name":"w","steps":[{"stepId":"s"}]}]}');
  const content = ec.encodeUtf8(JSON.stringify(workflow));
  const bytes = of.createPackage({
    packageId: 'cjs',
    content,
    packagerSecretKey: packager.secretKey,
    recipients: [deployment.publicKey],
    signers: [{ secretKey: signer.secretKey, signText: 'cjs' }],
  });
  const policy = {
    packageId: 'cjs',
    packagerIdentities: [of.trustedKey('p', ec.keyToHex(packager.publicKey))],
    requiredSigners: [of.trustedKey('s', ec.keyToHex(signer.publicKey))],
    additionalSigners: [],
    requiredAdditionalSignerCount: 0,
  };
  const opened = await of.openPackage(bytes, { policy, recipientSecretKey: deployment.secretKey });
  if (!ec.equalBytes(opened.content, content)) throw new Error('package round trip');
  if (wc.hashWorkflow(JSON.parse(ec.decodeUtf8(opened.content))) !== wc.hashWorkflow(workflow)) {
    throw new Error('workflow hash after the round trip');
  }
  // A refusal is a coded error in CommonJS too.
  try {
    await of.openPackage(bytes.subarray(0, 40), { policy, recipientSecretKey: deployment.secretKey });
    throw new Error('a truncated package opened');
  } catch (err) {
    if (!of.isOappError(err)) throw err;
  }
}

roundTrip().then(
  () => {
    if (problems.length > 0) {
      for (const p of problems) console.error(`  ${p}`);
      process.exit(1);
    }
    console.log(
      `${Object.keys(esm).length} CommonJS entries required; round trip through the CommonJS builds ok`,
    );
  },
  (err) => {
    console.error(`  CommonJS round trip: ${err && err.stack ? err.stack : err}`);
    process.exit(1);
  },
);
