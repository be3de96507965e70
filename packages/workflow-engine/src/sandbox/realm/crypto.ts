/**
 * Sandbox-side `crypto()` (SPEC.md §7.2, ADR 0076). Everything runs on the host (`crypto-ops.ts`, through
 * `@org/envelope-crypto`): keys never enter the realm except as the hex a script passes to `registerKey` or gets
 * from `generateKeyPair`; the other calls take the opaque key id `registerKey` returned. Made per run by
 * `extras.ts`.
 */
import { integerArg, textArg } from './args.js';
import { wholeBuffer } from './compress.js';
import type { UtilEnv } from './types.js';
import { concat, toBytes } from './util.js';

/** An optional key id argument: null when left out. */
function optionalId(id: unknown, what: string): string | null {
  return id === undefined || id === null ? null : textArg(id, what);
}

export function createCrypto(env: UtilEnv) {
  // `call` names the call in messages: `sign: content`, `sign: keyId`.
  const bytesOf = (op: string, call: string, args: unknown[], b: unknown, what: string): Uint8Array =>
    new Uint8Array(env.call(op, args, wholeBuffer(b, call + ': ' + what)) as ArrayBuffer);
  const id = (v: unknown, call: string): string => textArg(v, call + ': keyId');
  return {
    randomBytes(n: unknown) {
      // The range (0 … 65 536) is the host's (crypto-ops.ts); JSON would turn a string into a number's text.
      return new Uint8Array(env.call('crypto.randomBytes', [integerArg(n, 'randomBytes: n')]) as ArrayBuffer);
    },
    hash(b: unknown) {
      return bytesOf('crypto.hash', 'hash', [], b, 'b');
    },
    hmacSha256(key: unknown, data: unknown) {
      const k = toBytes(key, 'hmacSha256: key');
      const all = concat(k, toBytes(data, 'hmacSha256: data'));
      return bytesOf('crypto.hmacSha256', 'hmacSha256', [k.length], all, 'data');
    },
    generateKeyPair(purpose: unknown) {
      const p = textArg(purpose, 'generateKeyPair: purpose');
      const pair = env.call('crypto.generateKeyPair', [p]) as [string | null, string];
      return [pair[0], pair[1]];
    },
    registerKey(purpose: unknown, type: unknown, hex: unknown) {
      const args = [
        textArg(purpose, 'registerKey: purpose'),
        textArg(type, 'registerKey: type'),
        textArg(hex, 'registerKey: hex'),
      ];
      return env.call('crypto.registerKey', args) as string;
    },
    sign(content: unknown, keyId: unknown) {
      return bytesOf('crypto.sign', 'sign', [id(keyId, 'sign')], content, 'content');
    },
    verifySignature(signature: unknown, content: unknown, keyId: unknown) {
      const sig = toBytes(signature, 'verifySignature: signature');
      const all = concat(sig, toBytes(content, 'verifySignature: content'));
      const args = [id(keyId, 'verifySignature'), sig.length];
      return env.call('crypto.verify', args, wholeBuffer(all, 'verifySignature: content')) === true;
    },
    encrypt(content: unknown, keyId: unknown, senderKeyId?: unknown) {
      const args = [id(keyId, 'encrypt'), optionalId(senderKeyId, 'encrypt: senderKeyId')];
      return bytesOf('crypto.encrypt', 'encrypt', args, content, 'content');
    },
    decrypt(box: unknown, keyId: unknown, senderKeyId?: unknown) {
      const args = [id(keyId, 'decrypt'), optionalId(senderKeyId, 'decrypt: senderKeyId')];
      return bytesOf('crypto.decrypt', 'decrypt', args, box, 'box');
    },
    encryptSymmetric(content: unknown, keyId: unknown) {
      return bytesOf(
        'crypto.encryptSymmetric',
        'encryptSymmetric',
        [id(keyId, 'encryptSymmetric')],
        content,
        'content',
      );
    },
    decryptSymmetric(box: unknown, keyId: unknown) {
      return bytesOf(
        'crypto.decryptSymmetric',
        'decryptSymmetric',
        [id(keyId, 'decryptSymmetric')],
        box,
        'box',
      );
    },
  };
}
