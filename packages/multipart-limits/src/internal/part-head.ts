import { UploadError } from '../errors.js';
import { MAX_PART_HEADER_LINES } from '../options.js';
import { parseMediaType, parseParams } from './media-type.js';

/** What the policy needs from one part's header block. */
export interface PartHead {
  /** The `name` parameter exactly as sent (latin1 view of the bytes), or undefined when absent. */
  name: string | undefined;
  /** A non-empty `filename` parameter or the type `application/octet-stream` makes a file part (busboy's rule). */
  isFile: boolean;
  /** Lower-case `charset` parameter of the part's content type, if any. */
  charset: string | undefined;
  /** Lower-case `Content-Transfer-Encoding`, if any. */
  transferEncoding: string | undefined;
}

// RFC 9110 field-name ":" OWS field-value; obs-fold (a line starting with SP/HTAB) is refused (S22).
const HEADER_LINE = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+):[\t ]*([\t\x20-\x7e\x80-\xff]*?)[\t ]*$/;

function malformed(message: string): UploadError {
  return new UploadError('UPLOAD_MALFORMED', message);
}

/** Splits a header block into lower-case names and values; each name at most once. */
function headerMap(lines: readonly string[]): Map<string, string> {
  if (lines.length > MAX_PART_HEADER_LINES) {
    throw new UploadError(
      'UPLOAD_HEADERS_LIMIT',
      `a part has more than ${MAX_PART_HEADER_LINES} header lines`,
    );
  }
  const map = new Map<string, string>();
  for (const line of lines) {
    const m = HEADER_LINE.exec(line);
    if (m === null) throw malformed('a part header line is malformed');
    const name = m[1]!.toLowerCase();
    if (map.has(name)) throw malformed('a part header appears twice');
    map.set(name, m[2]!);
  }
  return map;
}

// A quoted-pair (backslash) in the quoted part name: parsers disagree on unescaping it, so no name is read from it.
const ESCAPED_NAME = /(?:^|;)[\t ]*name[\t ]*=[\t ]*"[^"]*\\/i;

function dispositionParams(value: string | undefined): Map<string, string> {
  if (value !== undefined && ESCAPED_NAME.test(value)) {
    throw malformed('a part name must not contain a backslash escape');
  }
  const m = value === undefined ? null : /^form-data(?=[;\t ]|$)/i.exec(value);
  const params = m === null ? undefined : parseParams(value!, m[0].length);
  if (params === undefined) throw malformed('a part has no valid content-disposition: form-data header');
  if (params.has('name*')) throw malformed('a part name must not use the name* parameter');
  // RFC 7578 §4.2: not used in forms; parsers that fail to decode one drop the whole part (busboy does).
  if (params.has('filename*')) throw malformed('a part must not use the filename* parameter');
  return params;
}

/**
 * Parses one part's header block (lines without their CRLF) into a {@link PartHead}.
 * @throws UploadError `UPLOAD_MALFORMED` (bad line, folded line, duplicate header, no form-data
 * disposition, bad content type), `UPLOAD_HEADERS_LIMIT` (too many lines).
 */
export function parsePartHead(lines: readonly string[]): PartHead {
  const headers = headerMap(lines);
  const params = dispositionParams(headers.get('content-disposition'));
  const rawType = headers.get('content-type');
  const mediaType = rawType === undefined ? undefined : parseMediaType(rawType);
  if (rawType !== undefined && mediaType?.params === undefined)
    throw malformed('a part content-type is malformed');
  // An empty filename does not make a file part (busboy's reading too).
  const hasFilename = (params.get('filename') ?? '') !== '';
  return {
    name: params.get('name'),
    isFile: hasFilename || mediaType?.essence === 'application/octet-stream',
    charset: mediaType?.params?.get('charset')?.toLowerCase(),
    transferEncoding: headers.get('content-transfer-encoding')?.toLowerCase(),
  };
}
