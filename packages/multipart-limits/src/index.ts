export { UploadError, UPLOAD_ERROR_CODES } from './errors.js';
export type { UploadErrorCode } from './errors.js';
