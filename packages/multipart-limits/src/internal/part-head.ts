import { UploadError } from '../errors.js';
import { MAX_PART_HEADER_LINES } from '../options.js';
import { parseMediaType, parseParams } from './media-type.js';

/** What the policy needs from one part's header block. */
export interface PartHead {
  /** The `name` parameter exactly as sent (latin1 view of the bytes), or undefined when absent. */
  name: string | undefined;
  /** A non-empty `filename` parameter or the type `application/octet-stream` makes a file part (busboy's rule). */
  isFile: boolean;
  /** The file name: `filename` as sent, or `filename*` decoded (RFC 8187); undefined when neither is present. */
  filename: string | undefined;
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
  // Parsers disagree on which of the two wins (RFC 6266 §4.3 prefers filename*): only one may be sent.
  if (params.has('filename*') && params.has('filename'))
    throw malformed('a part must not have both filename and filename*');
  return params;
}

// RFC 8187 §3.2.1 ext-value with the UTF-8 charset (the only one accepted): charset ' [language] ' value-chars.
const EXT_VALUE =
  /^utf-8'(?:[A-Za-z]{1,8}(?:-[A-Za-z0-9]{1,8})*)?'((?:%[0-9A-Fa-f]{2}|[A-Za-z0-9!#$&+.^_`|~-])*)$/i;
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * Decodes a `filename*` value strictly: busboy drops a part whose value it cannot decode, so anything it might
 * read differently (another charset, a bad percent-escape, invalid UTF-8) is refused, and so is a decoded name
 * with a control character.
 */
function decodeExtFilename(value: string): string {
  const m = EXT_VALUE.exec(value);
  if (m === null) throw malformed('a part filename* is not a UTF-8 ext-value (RFC 8187)');
  const bytes = Buffer.from(
    m[1]!.replace(/%([0-9A-Fa-f]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16))),
    'latin1',
  );
  let name: string;
  try {
    name = UTF8.decode(bytes);
  } catch {
    throw malformed('a part filename* does not decode to UTF-8');
  }
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f-\u009f]/.test(name))
    throw malformed('a part filename* holds a control character');
  return name;
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
  const ext = params.get('filename*');
  const filename = ext === undefined ? params.get('filename') : decodeExtFilename(ext);
  // An empty filename does not make a file part (busboy's reading too).
  const hasFilename = (filename ?? '') !== '';
  return {
    name: params.get('name'),
    isFile: hasFilename || mediaType?.essence === 'application/octet-stream',
    filename,
    charset: mediaType?.params?.get('charset')?.toLowerCase(),
    transferEncoding: headers.get('content-transfer-encoding')?.toLowerCase(),
  };
}
