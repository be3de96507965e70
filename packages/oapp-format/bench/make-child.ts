// Child process of section (c): creates the large package file once, away from the parent's heap.
// Usage (after compile.ts): node <build>/bench/make-child.js <out file> <plaintext bytes>   (keys from BENCH_SEED)
import { randomFillSync } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createPackage } from '../src/index.js';
import { PACKAGE_ID, benchKeys, signersOf } from './common.js';
import { procStatusKiB } from './files.js';

const [out, sizeText] = process.argv.slice(2);
if (out === undefined || sizeText === undefined) throw new Error('usage: make-child.ts <out> <bytes>');
const keys = benchKeys(process.env.BENCH_SEED ?? '');
const content = new Uint8Array(Number(sizeText));
for (let off = 0; off < content.length; off += 64 * 1024 * 1024) {
  randomFillSync(content.subarray(off, off + 64 * 1024 * 1024));
}
const t0 = performance.now();
const pkg = createPackage({
  packageId: PACKAGE_ID,
  content,
  packagerSecretKey: keys.packager.secretKey,
  recipients: keys.recipients.map((r) => r.publicKey),
  signers: signersOf(keys),
});
const createMs = performance.now() - t0;
writeFileSync(out, pkg);
console.log(
  JSON.stringify({
    createMs,
    totalMs: performance.now() - t0,
    packageBytes: pkg.length,
    vmHwmKiB: procStatusKiB('VmHWM'),
  }),
);
