/**
 * `context.crypto()` on the host side (SPEC.md §7.2, ADR 0076): every operation is `@org/envelope-crypto`, so
 * bytes are libsodium's. Keys a script registers live in this engine's key ring — one deployment's loaded
 * workflow file — until the engine is disposed; another engine never finds them (S146). Key material stays here:
 * the script holds an opaque key id, and a registered secret key is a secret from the moment it is registered
 * (S144): its hex (as given, lower and upper case) and the Base64 forms of its bytes are redacted, pinned for the
 * deployment's life. `hash` is BLAKE2b-256 and `hmacSha256` HMAC-SHA-256 (ADR 0082), both from `@noble/hashes`,
 * the library `@org/envelope-crypto` builds on.
 */
import { blake2b } from '@noble/hashes/blake2.js';
import { hmac } from '@noble/hashes/hmac.js';
import { sha256 as sha256Hash } from '@noble/hashes/sha2.js';
import {
  BOX_MAC_BYTES,
  BOX_NONCE_BYTES,
  CryptoError,
  KEY_PURPOSES,
  SIGNATURE_BYTES,
  boxEasy,
  boxOpenEasy,
  concatBytes,
  derivePublicKey,
  encodeHex,
  expectKey,
  generateKeyPair,
  keyToHex,
  parseKey,
  randomBytes,
  sealedBoxOpen,
  sealedBoxSeal,
  secretboxEasy,
  secretboxOpenEasy,
  sha256,
  signDetached,
  verifyDetached,
  wipe,
  type Key,
  type KeyPurpose,
} from '@org/envelope-crypto';
import { EngineError } from './errors.js';
import { badArgument, integerArg, notA, stringArg } from './host-args.js';
import type { EngineShared, RunContext } from './run-context.js';

/** Largest `crypto().randomBytes(n)`. */
export const MAX_RANDOM_BYTES = 65_536;
/** Most distinct keys one engine (one deployment's workflow file) may register. */
export const MAX_REGISTERED_KEYS = 1000;

type Args = unknown[];
type Op = (ctx: RunContext, args: Args, bytes: Uint8Array | undefined) => unknown;

/** Registered keys by id, and the id of each key material (by purpose, type and SHA-256 of the bytes). */
interface KeyRing {
  byId: Map<string, Key>;
  byMaterial: Map<string, string>;
}

// Keyed by the engine's shared state: nothing outside this file can reach a ring, and a disposed engine's ring
// goes with it.
const rings = new WeakMap<EngineShared, KeyRing>();

function ringOf(shared: EngineShared): KeyRing {
  let ring = rings.get(shared);
  if (!ring) rings.set(shared, (ring = { byId: new Map(), byMaterial: new Map() }));
  return ring;
}

/** Forgets (and wipes) every key an engine registered; called when the engine is disposed. */
export function dropKeys(shared: EngineShared): void {
  const ring = rings.get(shared);
  rings.delete(shared);
  for (const key of ring?.byId.values() ?? []) wipe(key.bytes);
}

const none = new Uint8Array(0);

function keyById(ctx: RunContext, id: unknown, what: string): Key {
  if (typeof id !== 'string') throw notA(`${what}: keyId`, 'a key id string', id);
  const key = ringOf(ctx.shared).byId.get(id);
  if (key) return key;
  throw new EngineError(
    'ENGINE_KEY_NOT_FOUND',
    `${what}: no key ${JSON.stringify(id.slice(0, 60))} is registered in this deployment`,
  );
}

/** The public half of a key: itself when public, derived from a registered secret key of the same purpose. */
function publicBytes(key: Key, purpose: KeyPurpose, what: string): Uint8Array {
  if (key.purpose === purpose && key.type === 'secret' && purpose !== 'symmetric')
    return derivePublicKey(key).bytes;
  expectKey(key, purpose, 'public', what);
  return key.bytes;
}

/** Every text form of a secret key the redactor tracks beyond its own derived forms (S144). */
function secretTexts(hex: string, bytes: Uint8Array, purpose: KeyPurpose): string[] {
  const forms = (b: Uint8Array): string[] => {
    const h = encodeHex(b);
    const buf = Buffer.from(b);
    return [h, h.toUpperCase(), buf.toString('base64'), buf.toString('base64url')];
  };
  // A sign secret key is seed ‖ public key: the seed alone is the secret.
  return [hex, ...forms(bytes), ...(purpose === 'sign' ? forms(bytes.subarray(0, 32)) : [])];
}

function registerKey(ctx: RunContext, args: Args): string {
  const purpose = stringArg(args[0], 'registerKey: purpose');
  const type = stringArg(args[1], 'registerKey: type');
  const hex = args[2];
  if (typeof hex !== 'string')
    throw new CryptoError('CRYPTO_BAD_HEX', 'registerKey: the key is not a hex string');
  // parseKey's messages name lengths and rules, never key bytes (S143).
  const key = parseKey({ purpose, type, keyHex: hex });
  const ring = ringOf(ctx.shared);
  const material = `${key.purpose}/${key.type}/${encodeHex(sha256(key.bytes))}`;
  const known = ring.byMaterial.get(material);
  if (known !== undefined) {
    wipe(key.bytes);
    return known;
  }
  if (ring.byId.size >= MAX_REGISTERED_KEYS) {
    wipe(key.bytes);
    throw new EngineError(
      'ENGINE_LIMIT',
      `registerKey: more than ${MAX_REGISTERED_KEYS} keys in one deployment`,
    );
  }
  if (key.type === 'secret') {
    // Pinned (never evicted) while the process lives; the host hears of each form too (ADR 0076).
    for (const text of secretTexts(hex, key.bytes, key.purpose)) {
      ctx.shared.secrets.redactor.add(text);
      ctx.shared.host.registerSecret(text);
    }
  }
  const id = `key-${encodeHex(randomBytes(12))}`;
  ring.byId.set(id, key);
  ring.byMaterial.set(material, id);
  return id;
}

function generate(ctx: RunContext, args: Args): [string | null, string] {
  const purpose = stringArg(args[0], 'generateKeyPair: purpose');
  if (!(KEY_PURPOSES as readonly string[]).includes(purpose))
    throw new CryptoError('CRYPTO_BAD_KEY_SPEC', 'generateKeyPair: unknown purpose');
  const pair = generateKeyPair(purpose as KeyPurpose);
  const secret = keyToHex(pair.secretKey);
  // A generated secret is a secret too, but a script may make one per run: these forms are evictable.
  for (const text of secretTexts(secret, pair.secretKey.bytes, pair.purpose)) ctx.shared.secrets.add(text);
  wipe(pair.secretKey.bytes);
  return [pair.publicKey ? keyToHex(pair.publicKey) : null, secret];
}

function sign(ctx: RunContext, args: Args, bytes: Uint8Array | undefined): Uint8Array {
  const key = keyById(ctx, args[0], 'sign');
  expectKey(key, 'sign', 'secret', 'sign');
  return signDetached(bytes ?? none, key.bytes);
}

/** `bytes` = signature ‖ content, `args[1]` the signature's length. A predicate: false for any bad signature. */
function verify(ctx: RunContext, args: Args, bytes: Uint8Array | undefined): boolean {
  const key = keyById(ctx, args[0], 'verifySignature');
  const pub = publicBytes(key, 'sign', 'verifySignature');
  const all = bytes ?? none;
  const n = integerArg(args[1], 'verifySignature: signature length', 0, all.length);
  if (n !== SIGNATURE_BYTES) return false; // truncated or padded (S145)
  return verifyDetached(all.subarray(0, n), all.subarray(n), pub);
}

/** The sender's key of an authenticated box; refused for the purposes that have none. */
function peerOf(ctx: RunContext, purpose: KeyPurpose, id: unknown, what: string): Key | undefined {
  if (purpose === 'authenticated') {
    if (id === null || id === undefined)
      throw badArgument(`${what}: an authenticated key needs the other party's key id as the third argument`);
    return keyById(ctx, id, what);
  }
  if (id !== null && id !== undefined)
    throw badArgument(`${what}: only an authenticated key takes a third argument`);
  return undefined;
}

/** nonce(24) ‖ `crypto_secretbox_easy` under a `symmetric` secret key. */
function secretboxSeal(key: Key, m: Uint8Array, what: string): Uint8Array {
  expectKey(key, 'symmetric', 'secret', what);
  const nonce = randomBytes(BOX_NONCE_BYTES);
  return concatBytes(nonce, secretboxEasy(m, nonce, key.bytes));
}

/** Opens nonce(24) ‖ box; one failure class for anything that cannot be opened, a box too short included. */
function secretboxOpen(key: Key, c: Uint8Array, what: string): Uint8Array {
  expectKey(key, 'symmetric', 'secret', what);
  if (c.length < BOX_NONCE_BYTES + BOX_MAC_BYTES)
    throw new CryptoError('CRYPTO_AUTH_FAILED', 'decryption failed');
  return secretboxOpenEasy(c.subarray(BOX_NONCE_BYTES), c.subarray(0, BOX_NONCE_BYTES), key.bytes);
}

function encrypt(ctx: RunContext, args: Args, bytes: Uint8Array | undefined): Uint8Array {
  const to = keyById(ctx, args[0], 'encrypt');
  const from = peerOf(ctx, to.purpose, args[1], 'encrypt');
  const m = bytes ?? none;
  if (to.purpose === 'anonymous') return sealedBoxSeal(m, publicBytes(to, 'anonymous', 'encrypt'));
  if (to.purpose === 'symmetric') return secretboxSeal(to, m, 'encrypt');
  const nonce = randomBytes(BOX_NONCE_BYTES);
  if (to.purpose === 'authenticated' && from) {
    expectKey(from, 'authenticated', 'secret', 'encrypt (sender)');
    return concatBytes(nonce, boxEasy(m, nonce, publicBytes(to, 'authenticated', 'encrypt'), from.bytes));
  }
  throw new CryptoError('CRYPTO_WRONG_KEY_PURPOSE', 'encrypt: a sign key cannot encrypt');
}

function decrypt(ctx: RunContext, args: Args, bytes: Uint8Array | undefined): Uint8Array {
  const to = keyById(ctx, args[0], 'decrypt');
  const from = peerOf(ctx, to.purpose, args[1], 'decrypt');
  const c = bytes ?? none;
  if (to.purpose === 'sign')
    throw new CryptoError('CRYPTO_WRONG_KEY_PURPOSE', 'decrypt: a sign key cannot decrypt');
  expectKey(to, to.purpose, 'secret', 'decrypt');
  if (to.purpose === 'anonymous') return sealedBoxOpen(c, derivePublicKey(to).bytes, to.bytes);
  if (to.purpose === 'symmetric') return secretboxOpen(to, c, 'decrypt');
  // One failure class for anything that cannot be opened, a box too short to hold nonce and tag included.
  if (c.length < BOX_NONCE_BYTES + BOX_MAC_BYTES)
    throw new CryptoError('CRYPTO_AUTH_FAILED', 'decryption failed');
  const nonce = c.subarray(0, BOX_NONCE_BYTES),
    box = c.subarray(BOX_NONCE_BYTES);
  return boxOpenEasy(box, nonce, publicBytes(from!, 'authenticated', 'decrypt (sender)'), to.bytes);
}

/** `encryptSymmetric(content, keyId)`: `encrypt` restricted to a `symmetric` secret key (ADR 0082). */
function encryptSymmetric(ctx: RunContext, args: Args, bytes: Uint8Array | undefined): Uint8Array {
  return secretboxSeal(keyById(ctx, args[0], 'encryptSymmetric'), bytes ?? none, 'encryptSymmetric');
}

/** `decryptSymmetric(box, keyId)`: `decrypt` restricted to a `symmetric` secret key (ADR 0082). */
function decryptSymmetric(ctx: RunContext, args: Args, bytes: Uint8Array | undefined): Uint8Array {
  return secretboxOpen(keyById(ctx, args[0], 'decryptSymmetric'), bytes ?? none, 'decryptSymmetric');
}

/**
 * `hmacSha256(key, data)`: `bytes` = key ‖ data, `args[0]` the key's length. The key is the script's own, so it
 * becomes a secret (evictable, like a generated one) in its hex, Base64 and, when it is text, UTF-8 forms.
 */
function hmacSha256(ctx: RunContext, args: Args, bytes: Uint8Array | undefined): Uint8Array {
  const all = bytes ?? none;
  const n = integerArg(args[0], 'hmacSha256: key length', 0, all.length);
  const key = all.subarray(0, n);
  const hex = encodeHex(key);
  const text = new TextDecoder('utf-8', { fatal: false }).decode(key);
  for (const form of [...secretTexts(hex, key, 'symmetric'), ...(text.includes('\uFFFD') ? [] : [text])])
    ctx.shared.secrets.add(form);
  return hmac(sha256Hash, key, all.subarray(n));
}

function random(_ctx: RunContext, args: Args): Uint8Array {
  return randomBytes(integerArg(args[0], 'randomBytes: n', 0, MAX_RANDOM_BYTES));
}

/** The `crypto.*` host calls (spread into host-ops.ts's table). */
export const CRYPTO_OPS: Record<string, Op> = {
  'crypto.randomBytes': random,
  // BLAKE2b-256, libsodium's crypto_generichash with its default 32-byte output (ADR 0082).
  'crypto.hash': (_ctx, _a, bytes) => blake2b(bytes ?? none, { dkLen: 32 }),
  'crypto.hmacSha256': hmacSha256,
  'crypto.generateKeyPair': generate,
  'crypto.registerKey': registerKey,
  'crypto.sign': sign,
  'crypto.verify': verify,
  'crypto.encrypt': encrypt,
  'crypto.decrypt': decrypt,
  'crypto.encryptSymmetric': encryptSymmetric,
  'crypto.decryptSymmetric': decryptSymmetric,
};
