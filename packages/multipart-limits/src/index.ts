export { UploadError, UPLOAD_ERROR_CODES, UPLOAD_STATUS_BY_CODE, isUploadError } from './errors.js';
export type { UploadErrorCode } from './errors.js';
export { readUpload, emptyStream } from './read-upload.js';
export { parseUploadBuffer, readUploadBuffered } from './read-buffered.js';
export type { BufferedUpload } from './read-buffered.js';
export type { Upload } from './upload.js';
export { checkUploadHeaders, acceptedMediaTypes, ACCEPTED_MEDIA_TYPES } from './check-headers.js';
export type { UploadKind } from './check-headers.js';
export { createCheckContinueListener } from './check-continue.js';
export type { CheckContinueOptions } from './check-continue.js';
export {
  DEFAULT_BODY_FIELD_BYTE_LIMIT,
  DEFAULT_RAW_BODY_BYTE_LIMIT,
  MULTIPART_OVERHEAD_BYTES,
  MAX_PART_HEADER_BYTES,
  MAX_PART_HEADER_LINES,
  MAX_PARTS,
} from './options.js';
export type { ReadUploadOptions, PartName } from './options.js';
