export { FormatError, FORMAT_ERROR_CODES } from './errors.js';
export type { FormatErrorCode } from './errors.js';
