// Renders SPEC.md §12 (the worked example) from testdata/vectors/v2-app-minimal.oapp and its seeds.
// generate.ts writes it into SPEC.md between the worked-example markers; test/spec.test.ts checks
// that SPEC.md holds exactly this text and that its hex decodes to the vector.
import { encodeHex, keyToHex, sha256 } from '@org/envelope-crypto';
import { derivePayloadKey } from '../src/payload.js';
import * as fx from '../test/fixtures.js';
import { sectionsOf } from '../test/package-surgery.js';
import { seeded } from './rogue.js';

export const START = '<!-- worked-example:start -->';
export const END = '<!-- worked-example:end -->';

function wrap(hex: string, width = 96): string {
  return hex.match(new RegExp(`.{1,${width}}`, 'g'))?.join('\n') ?? '';
}

/** The markdown between the markers. */
export function renderWorkedExample(pkg: Uint8Array): string {
  const s = sectionsOf(pkg);
  const fileKey = seeded('v2-app-minimal')(32);
  const td = new TextDecoder();
  const block = (title: string, bytes: Uint8Array) => `${title} (${bytes.length} bytes):\n\n\`\`\`hex\n${wrap(encodeHex(bytes))}\n\`\`\``;
  return [
    'Inputs (test keys; never use them for anything else):',
    '',
    `- deployment (recipient) secret key: \`${keyToHex(fx.deployment.secretKey)}\``,
    `- deployment public key: \`${keyToHex(fx.deployment.publicKey)}\` (hint \`${encodeHex(sha256(fx.deployment.publicKey.bytes).subarray(0, 8))}\`)`,
    `- packager public key: \`${keyToHex(fx.vendorPackager.publicKey)}\``,
    `- required signer public key: \`${keyToHex(fx.vendorSigner.publicKey)}\``,
    `- fileKey (from the stanza): \`${encodeHex(fileKey)}\``,
    `- payloadKey: \`${encodeHex(derivePayloadKey(fileKey))}\``,
    `- SHA-256(HEADER): \`${encodeHex(sha256(s.header.value))}\``,
    '',
    block('Frame', pkg.subarray(0, 12)),
    '',
    `HEADER, section header \`${encodeHex(pkg.subarray(s.header.offset, s.header.valueOffset))}\`, value:`,
    '',
    '```json',
    td.decode(s.header.value),
    '```',
    '',
    `STATEMENT, section header \`${encodeHex(pkg.subarray(s.statement.offset, s.statement.valueOffset))}\`, value:`,
    '',
    '```json',
    td.decode(s.statement.value),
    '```',
    '',
    `RECIPIENTS, section header \`${encodeHex(pkg.subarray(s.recipients.offset, s.recipients.valueOffset))}\`.`,
    block('Value: hint ‖ nonce ‖ box', s.recipients.value),
    '',
    `SIGNATURES, section header \`${encodeHex(pkg.subarray(s.signatures.offset, s.signatures.valueOffset))}\`.`,
    block('Value: three records', s.signatures.value),
    '',
    `PAYLOAD, section header \`${encodeHex(pkg.subarray(s.payload.offset, s.payload.valueOffset))}\`.`,
    block('Value: one final chunk, ciphertext ‖ tag', s.payload.value),
    '',
    `The whole package is ${pkg.length} bytes; SHA-256 \`${encodeHex(sha256(pkg))}\`.`,
  ].join('\n');
}

/** SPEC.md text with the example replaced. */
export function withWorkedExample(spec: string, pkg: Uint8Array): string {
  const a = spec.indexOf(START);
  const b = spec.indexOf(END);
  if (a < 0 || b < a) throw new Error('SPEC.md: worked-example markers not found');
  return `${spec.slice(0, a + START.length)}\n${renderWorkedExample(pkg)}\n${spec.slice(b)}`;
}
