export { CryptoError, CRYPTO_ERROR_CODES } from './errors.js';
export type { CryptoErrorCode } from './errors.js';
