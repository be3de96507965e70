// Generates the named negative corpus of `-2/` strings (docs/engineering.md §3) from fixed seeds.
// Regenerate: `pnpm --filter @org/envelope-crypto exec tsx testdata/generate.ts`. Never edit the output by hand;
// test/negative-corpus.test.ts regenerates it in memory and fails if the files differ.
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { boxEasy, concatBytes, encodeBase64, sha256, x25519PublicFromSecret } from '../src/index.js';

const seed = (label: string) => sha256(new TextEncoder().encode(`envelope-crypto testdata ${label}`));

/** The fixed parties: the packager (sender) and the decoder (recipient) whose tuple opens `valid.txt`. */
export const CORPUS_KEYS = {
  senderSecretKey: seed('sender'),
  senderPublicKey: x25519PublicFromSecret(seed('sender')),
  recipientSecretKey: seed('recipient'),
  recipientPublicKey: x25519PublicFromSecret(seed('recipient')),
};

/** 25 bytes, so the 65-byte envelope's Base64 ends in one "=" (a quantum with 2 unused bits). */
export const CORPUS_PLAINTEXT = new TextEncoder().encode('negative corpus plaintext');

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

function envelope(recipientPublicKey: Uint8Array): Uint8Array {
  const nonce = seed('nonce').subarray(0, 24);
  return concatBytes(nonce, boxEasy(CORPUS_PLAINTEXT, nonce, recipientPublicKey, CORPUS_KEYS.senderSecretKey));
}

function flipBit(bytes: Uint8Array, index: number, bit: number): Uint8Array {
  const out = bytes.slice();
  out[index]! ^= 1 << bit;
  return out;
}

/** File name → exact file content (no trailing newline). */
export function corpus(): Record<string, string> {
  const raw = envelope(CORPUS_KEYS.recipientPublicKey);
  const body = encodeBase64(raw);
  const text = `-2/${body}`;
  const last = body.length - 2; // the character before the single "=" carries 2 unused bits
  const trailing = body.slice(0, last) + B64[B64.indexOf(body[last]!) ^ 1]! + body.slice(last + 1);
  const other = x25519PublicFromSecret(seed('other recipient'));
  return {
    'valid.txt': text,
    'CRYPTO_BAD_PREFIX--version-1.txt': `-1/${body}`,
    'CRYPTO_BAD_PREFIX--no-prefix.txt': body,
    'CRYPTO_BAD_BASE64--inner-space.txt': `-2/${body.slice(0, 20)} ${body.slice(20)}`,
    'CRYPTO_BAD_BASE64--newline.txt': `-2/${body.slice(0, 40)}\n${body.slice(40)}`,
    'CRYPTO_BAD_BASE64--bang.txt': `-2/${body.slice(0, 8)}!!!!${body.slice(8)}`,
    'CRYPTO_BAD_BASE64--url-safe.txt': `-2/-_${body.slice(2)}`,
    'CRYPTO_BAD_BASE64--missing-padding.txt': `-2/${body.replace(/=+$/, '')}`,
    'CRYPTO_BAD_BASE64--extra-padding.txt': `-2/${body}=`,
    'CRYPTO_BAD_BASE64--trailing-bits.txt': `-2/${trailing}`,
    'CRYPTO_TRUNCATED--empty.txt': '-2/',
    'CRYPTO_TRUNCATED--39-bytes.txt': `-2/${encodeBase64(raw.subarray(0, 39))}`,
    'CRYPTO_TRUNCATED--tag-cut-to-4-bytes.txt': `-2/${encodeBase64(raw.subarray(0, 28))}`,
    'CRYPTO_AUTH_FAILED--tag-cut-ciphertext-kept.txt': `-2/${encodeBase64(concatBytes(raw.subarray(0, 28), raw.subarray(40)))}`,
    'CRYPTO_AUTH_FAILED--flipped-nonce-bit.txt': `-2/${encodeBase64(flipBit(raw, 3, 0))}`,
    'CRYPTO_AUTH_FAILED--flipped-tag-bit.txt': `-2/${encodeBase64(flipBit(raw, 24 + 7, 5))}`,
    'CRYPTO_AUTH_FAILED--flipped-ciphertext-bit.txt': `-2/${encodeBase64(flipBit(raw, raw.length - 1, 7))}`,
    'CRYPTO_AUTH_FAILED--dropped-last-byte.txt': `-2/${encodeBase64(raw.subarray(0, raw.length - 1))}`,
    'CRYPTO_AUTH_FAILED--wrong-recipient.txt': `-2/${encodeBase64(envelope(other))}`,
  };
}

const dir = fileURLToPath(new URL('./negative/', import.meta.url));

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  mkdirSync(dir, { recursive: true });
  for (const f of readdirSync(dir)) rmSync(new URL(`./negative/${f}`, import.meta.url));
  for (const [name, content] of Object.entries(corpus())) writeFileSync(`${dir}${name}`, content);
  console.log(`wrote ${Object.keys(corpus()).length} files to ${dir}`);
}
