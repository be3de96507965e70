// Operations per second of @org/envelope-crypto beside libsodium-wrappers (wasm) doing the same
// operation in the same process. Run with `pnpm --filter @org/envelope-crypto bench`; never in CI.
// BENCH_MS sets the time per measurement (default 150 ms; each row measures each side three times).
// Rows without an engine run the default engine (printed first). To measure the fallback, make
// sodium-native fail to load: `node -r ./block-sodium.cjs --import tsx bench/run.ts` with a preload
// whose Module._load throws for 'sodium-native'.
import sodium from 'libsodium-wrappers';
import {
  decryptString,
  defaultEngine,
  encryptString,
  generateKeyPair,
  signDetached,
  verifyDetached,
  type KeyPurpose,
} from '../src/index.js';

const BENCH_MS = Number(process.env['BENCH_MS'] ?? 150);

function opsPerSecond(fn: () => unknown): number {
  for (let i = 0; i < 20; i++) fn(); // warm-up
  let n = 0;
  const start = process.hrtime.bigint();
  const deadline = start + BigInt(BENCH_MS) * 1_000_000n;
  let now = start;
  while (now < deadline) {
    for (let i = 0; i < 10; i++) fn();
    n += 10;
    now = process.hrtime.bigint();
  }
  return (n * 1e9) / Number(now - start);
}

interface Row {
  operation: string;
  ours: string;
  libsodium: string;
  ratio: string;
}

const rows: Row[] = [];
const fmt = (x: number) => Math.round(x).toLocaleString('en-US');

const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;

/** Alternates ours and theirs over three rounds and keeps the medians, so a load spike on a shared machine hits both. */
function row(operation: string, ours: () => unknown, theirs: () => unknown): void {
  const as: number[] = [];
  const bs: number[] = [];
  for (let round = 0; round < 3; round++) {
    as.push(opsPerSecond(ours));
    bs.push(opsPerSecond(theirs));
  }
  const a = median(as);
  const b = median(bs);
  rows.push({ operation, ours: fmt(a), libsodium: fmt(b), ratio: `${(a / b).toFixed(2)}×` });
}

async function main(): Promise<void> {
  await sodium.ready;

  const libsodiumKeygen: Record<KeyPurpose, () => unknown> = {
    sign: () => sodium.crypto_sign_keypair(),
    authenticated: () => sodium.crypto_box_keypair(),
    anonymous: () => sodium.crypto_box_keypair(),
    symmetric: () => sodium.crypto_secretbox_keygen(),
  };
  for (const purpose of ['sign', 'authenticated', 'anonymous', 'symmetric'] as const) {
    row(`generateKeyPair('${purpose}')`, () => generateKeyPair(purpose), libsodiumKeygen[purpose]);
  }

  // -2/ string of a 64-byte plaintext: encrypt then decrypt.
  const packager = generateKeyPair('authenticated');
  const decoder = generateKeyPair('authenticated');
  const candidates = [
    { senderPublicKey: packager.publicKey!.bytes, recipientSecretKey: decoder.secretKey.bytes },
  ];
  const plaintext = new Uint8Array(64).fill(0x61);
  row(
    'encryptString + decryptString (64 B)',
    () => decryptString(encryptString(plaintext, decoder.publicKey!, packager.secretKey), candidates),
    () => {
      const nonce = sodium.randombytes_buf(24);
      const box = sodium.crypto_box_easy(
        plaintext,
        nonce,
        decoder.publicKey!.bytes,
        packager.secretKey.bytes,
      );
      const envelope = new Uint8Array(24 + box.length);
      envelope.set(nonce);
      envelope.set(box, 24);
      const text = `-2/${sodium.to_base64(envelope, sodium.base64_variants.ORIGINAL)}`;
      const raw = sodium.from_base64(text.slice(3), sodium.base64_variants.ORIGINAL);
      return sodium.crypto_box_open_easy(
        raw.subarray(24),
        raw.subarray(0, 24),
        packager.publicKey!.bytes,
        decoder.secretKey.bytes,
      );
    },
  );

  // Ed25519 over a 256-byte message.
  const signer = generateKeyPair('sign');
  const message = new Uint8Array(256).fill(0x62);
  const signature = signDetached(message, signer.secretKey.bytes);
  const sk = signer.secretKey.bytes;
  const pk = signer.publicKey!.bytes;
  // 'sodium' only where sodium-native loaded (else it throws); the fallback run leaves it out.
  const engines =
    defaultEngine() === 'sodium' ? (['sodium', 'native', 'js'] as const) : (['native', 'js'] as const);
  for (const engine of engines) {
    row(
      `signDetached (${engine})`,
      () => signDetached(message, sk, engine),
      () => sodium.crypto_sign_detached(message, sk),
    );
  }
  for (const engine of engines) {
    row(
      `verifyDetached (${engine})`,
      () => verifyDetached(signature, message, pk, engine),
      () => sodium.crypto_sign_verify_detached(signature, message, pk),
    );
  }

  const head = '| operation | ours (ops/s) | libsodium-wrappers (ops/s) | ours / libsodium |';
  console.log(
    `node ${process.version}, libsodium ${sodium.SODIUM_VERSION_STRING}, default engine ${defaultEngine()}, ` +
      `3 × ${BENCH_MS} ms per side and row, medians\n`,
  );
  console.log(head);
  console.log('|---|---:|---:|---:|');
  for (const r of rows) console.log(`| ${r.operation} | ${r.ours} | ${r.libsodium} | ${r.ratio} |`);
}

await main();
