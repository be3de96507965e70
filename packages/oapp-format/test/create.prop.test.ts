import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { derivePublicKey, encodeHex } from '@org/envelope-crypto';
import { createPackage, isOappError, openPackage } from '../src/index.js';
import { chunkNonce, derivePayloadKey } from '../src/internal.js';
import { ByteReader } from '../src/internal/byte-reader.js';
import { readPackagePrefix } from '../src/parse.js';
import { openStanza } from '../src/recipients.js';
import { deployment, vendorPackager, vendorPolicy, vendorSigner } from './fixtures.js';

const RUNS = process.env['SLOW'] ? 300 : 25;
const opts = { policy: vendorPolicy(), recipientSecretKey: deployment.secretKey };
const make = (content: Uint8Array, chunkSize = 1024) =>
  createPackage({
    packageId: 'hello-app',
    content,
    packagerSecretKey: vendorPackager.secretKey,
    recipients: [deployment.publicKey],
    signers: [{ secretKey: vendorSigner.secretKey, signText: 'p' }],
    chunkSize,
  });

async function payloadKeyOf(pkg: Uint8Array): Promise<string> {
  const parsed = await readPackagePrefix(new ByteReader([pkg]));
  const fileKey = openStanza(
    parsed.stanzas,
    parsed.headerSha256,
    derivePublicKey(deployment.secretKey).bytes,
    deployment.secretKey.bytes,
    vendorPackager.publicKey.bytes,
  );
  return encodeHex(derivePayloadKey(fileKey));
}

describe('createPackage properties', () => {
  it('open(create(x)) = x for any content and chunk size', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ maxLength: 5000 }),
        fc.constantFrom(1024, 2048, 4096),
        async (content, chunkSize) => {
          const opened = await openPackage(make(content, chunkSize), opts);
          expect(Buffer.from(opened.content).equals(Buffer.from(content))).toBe(true);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('any byte changed, removed or inserted yields a coded error, never success or a stray error', async () => {
    const pkg = make(new TextEncoder().encode('{"workflows":[{"name":"p"}]}'));
    await fc.assert(
      fc.asyncProperty(
        fc.nat(pkg.length - 1),
        fc.integer({ min: 1, max: 255 }),
        fc.constantFrom('xor', 'delete', 'insert'),
        async (i, v, op) => {
          const t =
            op === 'xor'
              ? Uint8Array.from(pkg, (b, j) => (j === i ? b ^ v : b))
              : op === 'delete'
                ? Uint8Array.from([...pkg.subarray(0, i), ...pkg.subarray(i + 1)])
                : Uint8Array.from([...pkg.subarray(0, i), v, ...pkg.subarray(i)]);
          const err = await openPackage(t, opts).then(
            () => undefined,
            (e: unknown) => e,
          );
          expect(isOappError(err)).toBe(true);
        },
      ),
      { numRuns: RUNS * 4 },
    );
  });

  it('S111: no (payload key, nonce) pair repeats across packages; counters step by one; only the last chunk is final', async () => {
    const keys = new Set<string>();
    for (let i = 0; i < RUNS; i++) keys.add(await payloadKeyOf(make(new Uint8Array(3000))));
    expect(keys.size).toBe(RUNS);
    const n = 5;
    const nonces = Array.from({ length: n }, (_, i) => chunkNonce(i, i === n - 1));
    expect(new Set(nonces.map(encodeHex)).size).toBe(n);
    nonces.forEach((nonce, i) => {
      expect(new DataView(nonce.buffer).getUint32(7)).toBe(i);
      expect(nonce[11]).toBe(i === n - 1 ? 1 : 0);
    });
  });
});
