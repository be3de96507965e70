import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { decodeHex } from '@org/envelope-crypto';
import { RequestError } from './errors.js';
import type { PackagerOperation } from './operation.js';

/**
 * Caller authentication (ADR 0140): optional bearer tokens, configured only as SHA-256 hashes, each with the
 * scopes it may use. One check for both front-ends, so both answer 401/403 with the same problem bytes.
 */

/** The scopes a token can hold. */
export const TOKEN_SCOPES = Object.freeze(['package', 'encrypt', 'inspect', 'key-gen'] as const);

/** One of {@link TOKEN_SCOPES}. */
export type TokenScope = (typeof TOKEN_SCOPES)[number];

/** The scope each operation needs; `null`: open to every caller (`health`). */
export const OPERATION_SCOPES = Object.freeze({
  'workflow-package': 'package',
  'package-envelope': 'package',
  'bootstrap-encrypt': 'encrypt',
  'string-encrypt': 'encrypt',
  'workflow-inspect': 'inspect',
  'workflow-compile': 'inspect',
  'workflow-hash': 'inspect',
  'build-workflows': 'inspect',
  'key-gen': 'key-gen',
  health: null,
} as const satisfies Record<PackagerOperation, TokenScope | null>);

/** One configured token: its name (for the operator, safe to log), the SHA-256 of the token and its scopes. */
export interface TokenRecord {
  readonly name: string;
  readonly digest: Uint8Array;
  readonly scopes: readonly TokenScope[];
}

/** The prefix of every token {@link newCallerToken} makes (so a leaked one is recognisable in a scan). */
export const TOKEN_PREFIX = 'oappt_';

const DIGEST_HEX = /^[0-9a-f]{64}$/;
const NAME = /^[A-Za-z0-9._-]{1,64}$/;
/** RFC 6750 `b64token`. */
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

function refuse(source: string, line: number, why: string): never {
  throw new RequestError(
    'REQUEST_TOKEN_CONFIG_INVALID',
    `${source} line ${line}: ${why}; a record is "sha256:<64 hex> <scope>[,<scope>…] <name>"`,
    { extensions: { source, line } },
  );
}

/**
 * Parses token records: one a line (`;` also separates records, for an environment variable), blank lines and
 * lines starting with `#` skipped. A record is `sha256:<64 lower-case hex> <scopes> <name>`, the scopes a
 * comma-separated list of {@link TOKEN_SCOPES}. Refused: anything that is not such a record — a plain token,
 * another or weaker hash (`md5:`, `sha1:`), a short or long digest, an unknown scope, a repeated digest or name.
 * Messages name `source` and the line, never the line's text (it may be a token).
 * @throws RequestError `REQUEST_TOKEN_CONFIG_INVALID`.
 */
export function parseTokenHashes(text: string, source = 'token configuration'): TokenRecord[] {
  const records: TokenRecord[] = [];
  const digests = new Set<string>();
  const names = new Set<string>();
  const lines = text.split(/\r?\n|;/);
  lines.forEach((raw, i) => {
    const line = i + 1;
    const trimmed = raw.trim();
    if (trimmed === '' || trimmed.startsWith('#')) return;
    const fields = trimmed.split(/[ \t]+/);
    const [hash = '', scopeList, name, ...rest] = fields;
    const colon = hash.indexOf(':');
    if (colon < 0) refuse(source, line, 'not a hash record (a plain token? configure its hash)');
    const algorithm = hash.slice(0, colon).toLowerCase();
    if (algorithm !== 'sha256')
      refuse(source, line, 'only sha256 token hashes are accepted (md5, sha1 and others are refused)');
    const hex = hash.slice(colon + 1);
    if (!DIGEST_HEX.test(hex)) refuse(source, line, 'the sha256 digest must be 64 lower-case hex digits');
    if (scopeList === undefined || name === undefined || rest.length > 0)
      refuse(source, line, 'a record has three fields: hash, scopes, name');
    const scopes = scopeList.split(',');
    for (const s of scopes)
      if (!(TOKEN_SCOPES as readonly string[]).includes(s))
        refuse(source, line, `unknown scope (scopes are ${TOKEN_SCOPES.join(', ')})`);
    if (!NAME.test(name)) refuse(source, line, 'the name must be 1 to 64 of A-Z a-z 0-9 . _ -');
    if (digests.has(hex)) refuse(source, line, 'the same hash is configured twice');
    if (names.has(name)) refuse(source, line, 'the same name is configured twice');
    digests.add(hex);
    names.add(name);
    records.push(
      Object.freeze({
        name,
        digest: decodeHex(hex),
        scopes: Object.freeze([...new Set(scopes)] as TokenScope[]),
      }),
    );
  });
  return records;
}

/** The SHA-256 of a token, as the `sha256:<hex>` a record starts with. */
export function tokenHash(token: string): string {
  return `sha256:${createHash('sha256').update(token, 'utf8').digest('hex')}`;
}

/**
 * A new random token (32 bytes from the system's CSPRNG, Base64url, after {@link TOKEN_PREFIX}) and the record
 * that configures it. The token is shown once to its holder; only the record goes into the configuration.
 * @throws RangeError for an unknown scope or a bad name.
 */
export function newCallerToken(
  scopes: readonly TokenScope[],
  name: string,
): { token: string; record: string } {
  if (scopes.length === 0 || scopes.some((s) => !(TOKEN_SCOPES as readonly string[]).includes(s)))
    throw new RangeError(`scopes must be some of ${TOKEN_SCOPES.join(', ')}`);
  if (!NAME.test(name)) throw new RangeError('name must be 1 to 64 of A-Z a-z 0-9 . _ -');
  const token = TOKEN_PREFIX + randomBytes(32).toString('base64url');
  return { token, record: `${tokenHash(token)} ${[...new Set(scopes)].join(',')} ${name}` };
}

/** Options of {@link createTokenCheck}. */
export interface TokenCheckOptions {
  /** The digest comparison (node's `timingSafeEqual`); replaceable so a test can count the comparisons made. */
  compare?: (a: Uint8Array, b: Uint8Array) => boolean;
  /** The `realm` of `WWW-Authenticate` (default `packager`). */
  realm?: string;
}

/** The caller check of one configuration. */
export interface TokenCheck {
  /** The configured token names (never the hashes). */
  readonly names: readonly string[];
  /**
   * Checks the `Authorization` header of a request for `operation` before anything else of it is read. Returns
   * the name of the matching token, or null for an open operation (`health`).
   * @throws RequestError `REQUEST_UNAUTHENTICATED` (401, `WWW-Authenticate: Bearer`) with no or an unknown token,
   *   `REQUEST_FORBIDDEN` (403) for a token without the operation's scope. Neither names or echoes the token.
   * @throws RangeError for an unknown operation.
   */
  authorize(authorization: string | readonly string[] | undefined, operation: string): string | null;
}

function scopeOf(operation: string): TokenScope | null {
  if (!Object.hasOwn(OPERATION_SCOPES, operation))
    throw new RangeError(`unknown packager operation ${JSON.stringify(operation.slice(0, 32))}`);
  return OPERATION_SCOPES[operation as PackagerOperation];
}

/**
 * The check for `records` (from {@link parseTokenHashes}). The presented token is hashed and its digest compared
 * with every configured digest in constant time, without stopping at a match, so the time taken does not depend
 * on which record matched or how much of a token was right.
 * @throws RangeError for an empty list (no tokens: the caller decides whether to serve unauthenticated).
 */
export function createTokenCheck(
  records: readonly TokenRecord[],
  options: TokenCheckOptions = {},
): TokenCheck {
  if (records.length === 0) throw new RangeError('records must hold at least one token');
  const compare = options.compare ?? ((a, b) => timingSafeEqual(a, b));
  const realm = options.realm ?? 'packager';
  const digests = records.map((r) => Uint8Array.from(r.digest));
  const list = records.map((r) => ({ name: r.name, scopes: new Set<string>(r.scopes) }));
  const unauthenticated = (error?: string): RequestError =>
    new RequestError('REQUEST_UNAUTHENTICATED', 'this endpoint needs a bearer token in Authorization', {
      headers: {
        'WWW-Authenticate':
          error === undefined ? `Bearer realm="${realm}"` : `Bearer realm="${realm}", error="${error}"`,
      },
    });
  return {
    names: Object.freeze(list.map((r) => r.name)),
    authorize(authorization, operation) {
      const scope = scopeOf(operation);
      if (scope === null) return null;
      const header = typeof authorization === 'string' ? authorization : authorization?.[0];
      if (header === undefined || header === '') throw unauthenticated();
      const space = header.indexOf(' ');
      const scheme = space < 0 ? header : header.slice(0, space);
      if (scheme.toLowerCase() !== 'bearer') throw unauthenticated();
      const token = space < 0 ? '' : header.slice(space + 1).trim();
      if (token === '') throw unauthenticated();
      // Whatever was presented is hashed and compared with every record: same work for every candidate.
      const presented = createHash('sha256').update(token, 'utf8').digest();
      let match = -1;
      for (let i = 0; i < digests.length; i++) {
        const equal = compare(presented, digests[i] as Uint8Array);
        // No early exit and no branch on a secret-dependent value beyond the index kept.
        match = equal && match < 0 ? i : match;
      }
      presented.fill(0);
      if (match < 0 || !B64TOKEN.test(token)) throw unauthenticated('invalid_token');
      const record = list[match] as (typeof list)[number];
      if (!record.scopes.has(scope))
        throw new RequestError('REQUEST_FORBIDDEN', `this token does not hold the scope ${scope}`, {
          headers: {
            'WWW-Authenticate': `Bearer realm="${realm}", error="insufficient_scope", scope="${scope}"`,
          },
        });
      return record.name;
    },
  };
}
