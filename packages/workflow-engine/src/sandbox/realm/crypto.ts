/**
 * Sandbox-side `crypto()` (SPEC.md §7.2, ADR 0076). Everything runs on the host (`crypto-ops.ts`, through
 * `@org/envelope-crypto`): keys never enter the realm except as the hex a script passes to `registerKey` or gets
 * from `generateKeyPair`; the other calls take the opaque key id `registerKey` returned. Made per run by
 * `extras.ts`.
 */
import { wholeBuffer } from './compress.js';
import type { UtilEnv } from './types.js';
import { concat, toBytes } from './util.js';

/** An optional key id argument: null when left out. */
function optionalId(id: unknown): string | null {
  return id === undefined || id === null ? null : String(id);
}

export function createCrypto(env: UtilEnv) {
  const bytesOf = (op: string, args: unknown[], b: unknown): Uint8Array =>
    new Uint8Array(env.call(op, args, wholeBuffer(b)) as ArrayBuffer);
  return {
    randomBytes(n: unknown) {
      return new Uint8Array(env.call('crypto.randomBytes', [Number(n)]) as ArrayBuffer);
    },
    hash(b: unknown) {
      return bytesOf('crypto.hash', [], b);
    },
    hmacSha256(key: unknown, data: unknown) {
      const k = toBytes(key);
      return bytesOf('crypto.hmacSha256', [k.length], concat(k, data));
    },
    generateKeyPair(purpose: unknown) {
      const pair = env.call('crypto.generateKeyPair', [String(purpose)]) as [string | null, string];
      return [pair[0], pair[1]];
    },
    registerKey(purpose: unknown, type: unknown, hex: unknown) {
      return env.call('crypto.registerKey', [String(purpose), String(type), String(hex)]) as string;
    },
    sign(content: unknown, keyId: unknown) {
      return bytesOf('crypto.sign', [String(keyId)], content);
    },
    verifySignature(signature: unknown, content: unknown, keyId: unknown) {
      const sig = toBytes(signature);
      return (
        env.call('crypto.verify', [String(keyId), sig.length], wholeBuffer(concat(sig, content))) === true
      );
    },
    encrypt(content: unknown, keyId: unknown, senderKeyId?: unknown) {
      return bytesOf('crypto.encrypt', [String(keyId), optionalId(senderKeyId)], content);
    },
    decrypt(box: unknown, keyId: unknown, senderKeyId?: unknown) {
      return bytesOf('crypto.decrypt', [String(keyId), optionalId(senderKeyId)], box);
    },
    encryptSymmetric(content: unknown, keyId: unknown) {
      return bytesOf('crypto.encryptSymmetric', [String(keyId)], content);
    },
    decryptSymmetric(box: unknown, keyId: unknown) {
      return bytesOf('crypto.decryptSymmetric', [String(keyId)], box);
    },
  };
}
