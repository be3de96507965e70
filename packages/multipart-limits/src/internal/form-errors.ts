import { UploadError } from '../errors.js';
import type { PartName } from '../options.js';

// The errors both form readers (streaming and buffered) raise, so their codes, messages and details agree.

/** `part` undefined: the form has neither part (docs/interfaces.md §6.2: nothing to process). */
export function missingPart(part: PartName | undefined): UploadError {
  const what = part === undefined ? 'neither a body nor a stream part' : `no ${part} part`;
  return new UploadError('UPLOAD_MISSING_PART', `the form has ${what}`, {
    details: { parts: part === undefined ? ['body', 'stream'] : [part] },
  });
}

export function streamTooLarge(limit: number): UploadError {
  return new UploadError('UPLOAD_FILE_TOO_LARGE', `the stream part exceeds the limit of ${limit} bytes`, {
    details: { limit },
  });
}

export function requestTooLarge(cap: number): UploadError {
  return new UploadError('UPLOAD_REQUEST_TOO_LARGE', `the request exceeds the limit of ${cap} bytes`, {
    details: { limit: cap },
  });
}
