// Section (b): operations per second of key generation, string encryption and the creation of a
// 10 KB workflow package, each beside libsodium (libsodium-wrappers-sumo, the reference C library
// compiled to wasm) doing the comparable primitive work in the same run.
import sodium from 'libsodium-wrappers-sumo';
import { encryptString, generateKeyPair, randomBytes, type KeyPurpose } from '@org/envelope-crypto';
import { createPackage } from '../src/index.js';
import { PACKAGE_ID, REPS, fmt, median, printTable, signersOf, type BenchKeys } from './common.js';

export interface ThroughputRow {
  readonly name: string;
  readonly ours: number;
  readonly base: number;
  readonly baseName: string;
}

const SLICE_MS = 250;

/** Operations per second: warm-up, then REPS slices of SLICE_MS; the median slice is reported. */
function opsPerSec(fn: () => unknown): number {
  let sink = 0;
  const warmEnd = performance.now() + 100;
  while (performance.now() < warmEnd) if (fn() !== undefined) sink++;
  const rates: number[] = [];
  for (let r = 0; r < REPS; r++) {
    let ops = 0;
    const t0 = performance.now();
    let elapsed = 0;
    while (elapsed < SLICE_MS) {
      for (let i = 0; i < 16; i++) if (fn() !== undefined) sink++;
      ops += 16;
      elapsed = performance.now() - t0;
    }
    rates.push((ops / elapsed) * 1000);
  }
  if (sink < 0) console.log(sink); // keeps the results observable
  return median(rates);
}

/** A compiled-workflow-like JSON document of about `bytes` bytes. */
export function workflowOf(bytes: number): Uint8Array {
  const steps: unknown[] = [];
  let i = 0;
  let text = '';
  while (text.length < bytes) {
    steps.push({ stepId: `step-${i}`, resultsProcessor: { script: `context.setBody('step ${i++}')` } });
    text = JSON.stringify({ workflows: [{ name: 'bench', steps }] });
  }
  return new TextEncoder().encode(text.slice(0, bytes - 4) + '    ');
}

export async function benchThroughput(keys: BenchKeys): Promise<ThroughputRow[]> {
  await sodium.ready;
  const rows: ThroughputRow[] = [];
  const add = (name: string, ours: () => unknown, baseName: string, base: () => unknown): void => {
    rows.push({ name, ours: opsPerSec(ours), base: opsPerSec(base), baseName });
  };

  const sodiumKeygen: Record<KeyPurpose, [string, () => unknown]> = {
    sign: ['crypto_sign_keypair', () => sodium.crypto_sign_keypair()],
    authenticated: ['crypto_box_keypair', () => sodium.crypto_box_keypair()],
    anonymous: ['crypto_box_keypair', () => sodium.crypto_box_keypair()],
    symmetric: ['crypto_secretbox_keygen', () => sodium.crypto_secretbox_keygen()],
  };
  for (const purpose of ['sign', 'authenticated', 'anonymous', 'symmetric'] as const) {
    const [baseName, base] = sodiumKeygen[purpose];
    add(`generateKeyPair('${purpose}')`, () => generateKeyPair(purpose), baseName, base);
  }

  // encryptString: fresh nonce, crypto_box (X25519 + HSalsa20 + XSalsa20-Poly1305), Base64.
  const message = randomBytes(64);
  const sender = keys.packager;
  const recipient = keys.recipients[0]!;
  add(
    'encryptString (64 B)',
    () => encryptString(message, recipient.publicKey, sender.secretKey),
    'nonce + crypto_box_easy + to_base64',
    () => {
      const nonce = sodium.randombytes_buf(24);
      const box = sodium.crypto_box_easy(message, nonce, recipient.publicKey.bytes, sender.secretKey.bytes);
      const out = new Uint8Array(24 + box.length);
      out.set(nonce);
      out.set(box, 24);
      return '-2/' + sodium.to_base64(out, sodium.base64_variants.ORIGINAL);
    },
  );

  // createPackage of a 10 KB workflow, 3 signers, 5 recipients; the baseline does the same
  // primitive work: SHA-256 of the content, 3 Ed25519 signatures over a statement-sized
  // message, HKDF (two HMACs), one ChaCha20-Poly1305 chunk, SHA-256 of the ciphertext and of a
  // header-sized message, and 5 crypto_box_easy of the 64-byte file key ‖ header digest.
  const content = workflowOf(10_000);
  const signers = signersOf(keys, 3);
  const recipients = keys.recipients.slice(0, 5);
  const statementLike = randomBytes(420);
  const headerLike = randomBytes(520);
  const signSks = keys.signers.map((s) => s.secretKey.bytes);
  const packagerSk = keys.packager.secretKey.bytes;
  add(
    'createPackage (10 KB, 3 signers, 5 recipients)',
    () =>
      createPackage({
        packageId: PACKAGE_ID,
        content,
        packagerSecretKey: keys.packager.secretKey,
        recipients: recipients.map((r) => r.publicKey),
        signers,
      }),
    'same primitives in libsodium',
    () => {
      const contentHash = sodium.crypto_hash_sha256(content);
      const sigs = signSks.map((sk) => sodium.crypto_sign_detached(statementLike, sk));
      const fileKey = sodium.randombytes_buf(32);
      const prk = sodium.crypto_auth_hmacsha256(fileKey, new Uint8Array(32));
      const payloadKey = sodium.crypto_auth_hmacsha256(Uint8Array.of(1), prk);
      const nonce = new Uint8Array(12);
      nonce[11] = 1;
      const payload = sodium.crypto_aead_chacha20poly1305_ietf_encrypt(
        content,
        null,
        null,
        nonce,
        payloadKey,
      );
      const payloadHash = sodium.crypto_hash_sha256(payload);
      const headerHash = sodium.crypto_hash_sha256(headerLike);
      const inner = new Uint8Array(64);
      inner.set(fileKey);
      inner.set(headerHash, 32);
      const stanzas = recipients.map((r) =>
        sodium.crypto_box_easy(inner, sodium.randombytes_buf(24), r.publicKey.bytes, packagerSk),
      );
      return [contentHash, sigs, payloadHash, stanzas];
    },
  );

  printTable(
    [
      'operation (median of ' + REPS + ' x ' + SLICE_MS + ' ms)',
      'ours ops/s',
      'libsodium ops/s',
      'ours/base',
      'baseline',
    ],
    rows.map((r) => [r.name, fmt(r.ours, 0), fmt(r.base, 0), fmt(r.ours / r.base, 2), r.baseName]),
    [4],
  );
  console.log('ours/base > 1 means ours does more operations per second than libsodium-wasm.');
  return rows;
}
