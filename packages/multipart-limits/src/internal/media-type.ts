import { UploadError } from '../errors.js';

/** A parsed `type/subtype; name=value` header value; names and the essence are lower case. */
export interface MediaType {
  /** `type/subtype`, lower case. */
  essence: string;
  /**
   * Parameters by lower-case name, values exactly as sent (quoted strings unescaped); undefined when the
   * parameter list is malformed (so a multipart type can still be told apart and answered precisely).
   */
  params: Map<string, string> | undefined;
}

// RFC 9110 §5.6.2 token characters.
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const TOKEN_CHAR = /[!#$%&'*+.^_`|~0-9A-Za-z-]/;
// RFC 9110 §5.6.4 qdtext and quoted-pair payload (HTAB, SP, VCHAR, obs-text).
const QDTEXT = /[\t \x21\x23-\x5b\x5d-\x7e\x80-\xff]/;
const QUOTED_PAIR = /[\t \x21-\x7e\x80-\xff]/;

/** Reads a token starting at `i`; returns [token, next index]. */
function readToken(s: string, i: number): [string, number] {
  let j = i;
  while (j < s.length && TOKEN_CHAR.test(s[j]!)) j++;
  return [s.slice(i, j), j];
}

/** Reads a quoted-string starting at the opening quote; returns undefined when unterminated or invalid. */
function readQuoted(s: string, i: number): [string, number] | undefined {
  let out = '';
  for (let j = i + 1; j < s.length; j++) {
    const c = s[j]!;
    if (c === '"') return [out, j + 1];
    if (c === '\\') {
      const next = s[j + 1];
      if (next === undefined || !QUOTED_PAIR.test(next)) return undefined;
      out += next;
      j++;
    } else if (QDTEXT.test(c)) out += c;
    else return undefined;
  }
  return undefined;
}

function skipOws(s: string, i: number): number {
  while (s[i] === ' ' || s[i] === '\t') i++;
  return i;
}

/** Reads one `; name=value` parameter starting at `i` (at the `;`). */
function readParam(s: string, i: number): [string, string, number] | undefined {
  if (s[i] !== ';') return undefined;
  const [name, afterName] = readToken(s, skipOws(s, i + 1));
  if (name === '' || s[afterName] !== '=') return undefined;
  const value = s[afterName + 1] === '"' ? readQuoted(s, afterName + 1) : readToken(s, afterName + 1);
  if (value === undefined || (value[0] === '' && s[afterName + 1] !== '"')) return undefined;
  return [name.toLowerCase(), value[0], value[1]];
}

/**
 * Parses `*( OWS ";" OWS name "=" ( token / quoted-string ) ) OWS` from `i` to the end of `s`.
 * Duplicate names make the whole value invalid (parsers disagree on which one wins).
 */
export function parseParams(s: string, i: number): Map<string, string> | undefined {
  const params = new Map<string, string>();
  for (let j = skipOws(s, i); j < s.length; j = skipOws(s, j)) {
    const param = readParam(s, j);
    if (param === undefined || params.has(param[0])) return undefined;
    params.set(param[0], param[1]);
    j = param[2];
  }
  return params;
}

/** Strictly parses a media type (RFC 9110 §8.3.1); undefined when the value is not well formed. */
export function parseMediaType(value: string): MediaType | undefined {
  const slash = value.indexOf('/');
  if (slash <= 0) return undefined;
  const type = value.slice(0, slash);
  const [subtype, end] = readToken(value, slash + 1);
  if (!TOKEN.test(type) || subtype === '') return undefined;
  return { essence: `${type}/${subtype}`.toLowerCase(), params: parseParams(value, end) };
}

// RFC 2046 §5.1.1 bchars; 1 to 70 characters, the last one not a space.
const BOUNDARY = /^[0-9A-Za-z'()+_,\-./:=? ]{0,69}[0-9A-Za-z'()+_,\-./:=?]$/;

/**
 * The multipart boundary of a parsed `multipart/form-data` media type.
 * @throws UploadError `UPLOAD_BAD_BOUNDARY` when it is missing, empty, longer than 70 characters or has a
 * character outside RFC 2046 `bchars`.
 */
export function boundaryOf(mediaType: MediaType): string {
  if (mediaType.params === undefined) {
    throw new UploadError('UPLOAD_BAD_BOUNDARY', 'multipart content type parameters are malformed');
  }
  const boundary = mediaType.params.get('boundary');
  if (boundary === undefined)
    throw new UploadError('UPLOAD_BAD_BOUNDARY', 'multipart content type has no boundary');
  if (!BOUNDARY.test(boundary)) {
    throw new UploadError(
      'UPLOAD_BAD_BOUNDARY',
      `multipart boundary must be 1 to 70 rfc 2046 characters (got ${boundary.length})`,
    );
  }
  return boundary;
}
