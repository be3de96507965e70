import { expectKey, parseKey, wipe, type Key, type KeyPurpose, type KeyType } from '@org/envelope-crypto';
import type { PackageSigner } from '@org/oapp-format';
import { RequestError } from './errors.js';
import type { KeyInput, SignerInput } from './request-schemas.js';

/** `signers[0].key` → `/signers/0/key`. */
function pointerOf(field: string): string {
  return '/' + field.replace(/\[(\d+)\]/g, '/$1').replaceAll('.', '/');
}

/** The keys of one request, parsed strictly, looked up by id for the fields that reference them. */
export interface Keyring {
  /**
   * The key `id`, checked to fit `field`.
   * @throws RequestError `REQUEST_UNKNOWN_KEY_ID`; CryptoError `CRYPTO_WRONG_KEY_PURPOSE`, `CRYPTO_WRONG_KEY_TYPE`.
   */
  resolve(id: string, field: string, purpose: KeyPurpose, type: KeyType): Key;
  /** Overwrites every parsed key's bytes (call when the request is done). */
  wipe(): void;
}

/**
 * Parses every key of `keys` with envelope-crypto's `parseKey` (strict hex, exact length, sign-key
 * consistency S95, weak public keys S115); errors name the key id and never carry key material.
 * @throws RequestError `REQUEST_DUPLICATE_KEY_ID`; CryptoError `CRYPTO_*`.
 */
export function parseKeyring(specs: readonly KeyInput[]): Keyring {
  const keys = new Map<string, Key>();
  const wipeAll = () => keys.forEach((k) => wipe(k.bytes));
  try {
    specs.forEach((spec, i) => {
      if (keys.has(spec.id)) {
        throw new RequestError('REQUEST_DUPLICATE_KEY_ID', `keys/${i}: the id "${spec.id}" is used twice`, {
          errors: [{ pointer: `/keys/${i}/id`, detail: 'duplicate id' }],
        });
      }
      keys.set(spec.id, parseKey(spec));
    });
  } catch (err) {
    wipeAll();
    throw err;
  }
  return {
    resolve(id, field, purpose, type) {
      const key = keys.get(id);
      if (key === undefined) {
        throw new RequestError('REQUEST_UNKNOWN_KEY_ID', `${field}: no key with id "${id}" in keys`, {
          errors: [{ pointer: pointerOf(field), detail: `unknown key id "${id}"` }],
        });
      }
      expectKey(key, purpose, type, field);
      return key;
    },
    wipe: wipeAll,
  };
}

/** The recipients (`authenticated` public keys) named by `encryptionKeys`. */
export function resolveRecipients(ring: Keyring, ids: readonly string[], field = 'encryptionKeys'): Key[] {
  return ids.map((id, i) => ring.resolve(id, `${field}[${i}]`, 'authenticated', 'public'));
}

/** The packager identity (`authenticated` secret key). */
export function resolvePackager(ring: Keyring, id: string): Key {
  return ring.resolve(id, 'packagerIdentityPrivateKey', 'authenticated', 'secret');
}

/** The signers (`sign` secret keys with their texts). */
export function resolveSigners(ring: Keyring, signers: readonly SignerInput[] | undefined): PackageSigner[] {
  return (signers ?? []).map((s, i) => ({
    secretKey: ring.resolve(s.key, `signers[${i}].key`, 'sign', 'secret'),
    signText: s.signText,
  }));
}
