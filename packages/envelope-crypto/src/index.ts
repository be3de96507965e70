export { CRYPTO_ERROR_CODES, CryptoError, isCryptoError } from './errors.js';
export type { CryptoErrorCode, CryptoErrorOptions } from './errors.js';
export { decodeBase64, decodeHex, decodeUtf8, encodeBase64, encodeHex, encodeUtf8 } from './encoding.js';
export { assertBytes, concatBytes, equalBytes, randomBytes, wipe } from './bytes.js';
export {
  KEY_BYTES,
  KEY_PURPOSES,
  KEY_TYPES,
  SIGN_SECRET_KEY_BYTES,
  assertStrongPublicKey,
  derivePublicKey,
  ed25519PublicFromSeed,
  expectKey,
  generateKeyPair,
  keyByteLength,
  keyFromBytes,
  keyToHex,
  parseKey,
  x25519PublicFromSecret,
} from './keys.js';
export type { Key, KeyPair, KeyPurpose, KeySpec, KeyType } from './keys.js';
export { SIGNATURE_BYTES, defaultEngine, signDetached, verifyDetached } from './sign.js';
export type { Engine } from './sign.js';
export {
  BOX_MAC_BYTES,
  BOX_NONCE_BYTES,
  SEAL_BYTES,
  boxBeforeNm,
  boxEasy,
  boxOpenEasy,
  sealedBoxOpen,
  sealedBoxSeal,
  secretboxEasy,
  secretboxOpenEasy,
  x25519SharedSecret,
} from './box.js';
export {
  AEAD_KEY_BYTES,
  AEAD_NONCE_BYTES,
  AEAD_TAG_BYTES,
  aeadDecrypt,
  aeadEncrypt,
  aeadEncryptInto,
} from './aead.js';
export { createSha256, hkdfSha256, sha256 } from './hash.js';
export type { Sha256Stream } from './hash.js';
export {
  MAX_STRING_PLAINTEXT_BYTES,
  STRING_PREFIX,
  decryptString,
  encryptString,
  isEncryptedString,
  parseEncryptedString,
  parseKeyTuple,
  parseKeyTupleList,
} from './string-envelope.js';
export type { KeyTuple } from './string-envelope.js';
