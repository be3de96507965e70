import { timingSafeEqual } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  OPERATION_SCOPES,
  PACKAGER_OPERATIONS,
  RequestError,
  TOKEN_PREFIX,
  createPackagerCapability,
  createTokenCheck,
  newCallerToken,
  parseTokenHashes,
  tokenHash,
  type PackagerDirs,
} from '../src/index.js';
import { makeDirs, useCapabilityServer } from './helpers.js';

const packer = newCallerToken(['package', 'inspect'], 'ci-packer');
const keys = newCallerToken(['key-gen'], 'keys');
const records = `# packager callers\n${packer.record}\n\n${keys.record}\n`;

/** `token` with its last character changed (still a valid b64token). */
function lastByteFlipped(token: string): string {
  const last = token.at(-1) === 'A' ? 'B' : 'A';
  return token.slice(0, -1) + last;
}

describe('parseTokenHashes', () => {
  it('reads sha256 records with scopes and names, skipping comments and blank lines; `;` separates too', () => {
    const parsed = parseTokenHashes(records);
    expect(parsed.map((r) => [r.name, r.scopes])).toEqual([
      ['ci-packer', ['package', 'inspect']],
      ['keys', ['key-gen']],
    ]);
    expect(parseTokenHashes(`${packer.record};${keys.record}`)).toHaveLength(2);
    expect(Buffer.from(parsed[0]!.digest).toString('hex')).toBe(tokenHash(packer.token).slice(7));
  });

  it('makes tokens of 32 random bytes after the prefix, and their records', () => {
    expect(packer.token.startsWith(TOKEN_PREFIX)).toBe(true);
    expect(Buffer.from(packer.token.slice(TOKEN_PREFIX.length), 'base64url')).toHaveLength(32);
    expect(packer.record).toBe(`${tokenHash(packer.token)} package,inspect ci-packer`);
    expect(() => newCallerToken([], 'x')).toThrow(RangeError);
    expect(() => newCallerToken(['all' as never], 'x')).toThrow(RangeError);
  });

  it('S175 refuses a plain token, a weak or malformed hash, naming the source and line, never the value', () => {
    const digest = tokenHash(packer.token).slice(7);
    const bad: [string, RegExp][] = [
      [packer.token, /not a hash record/],
      [`${packer.token} package ci`, /not a hash record/],
      [`md5:0123456789abcdef0123456789abcdef package ci`, /only sha256/],
      [`sha1:0123456789abcdef0123456789abcdef01234567 package ci`, /only sha256/],
      [`sha256:${digest.slice(0, 40)} package ci`, /64 lower-case hex/],
      [`sha256:${digest.toUpperCase()} package ci`, /64 lower-case hex/],
      [`sha256:${digest} package`, /three fields/],
      [`sha256:${digest} admin ci`, /unknown scope/],
      [`sha256:${digest} package ci\nsha256:${digest} inspect other`, /same hash/],
    ];
    for (const [text, why] of bad) {
      let caught: unknown;
      try {
        parseTokenHashes(`# first\n${text}`, 'PACKAGER_TOKEN_HASHES');
      } catch (err) {
        caught = err;
      }
      expect(caught).toBeInstanceOf(RequestError);
      const err = caught as RequestError;
      expect(err.code).toBe('REQUEST_TOKEN_CONFIG_INVALID');
      expect(err.message).toMatch(/^PACKAGER_TOKEN_HASHES line (2|3): /);
      expect(err.message).toMatch(why);
      expect(err.message).not.toContain(packer.token);
      expect(err.message).not.toContain(digest.slice(0, 16));
      expect(err.message).not.toContain('0123456789abcdef');
    }
  });
});

describe('createTokenCheck', () => {
  const check = createTokenCheck(parseTokenHashes(records));

  it('maps every operation to a scope; health is open', () => {
    expect(Object.keys(OPERATION_SCOPES).sort()).toEqual([...PACKAGER_OPERATIONS].sort());
    expect(check.authorize(undefined, 'health')).toBeNull();
    expect(() => check.authorize(undefined, 'nope')).toThrow(RangeError);
    expect(check.names).toEqual(['ci-packer', 'keys']);
  });

  it('returns the name of the token that holds the scope', () => {
    expect(check.authorize(`Bearer ${packer.token}`, 'workflow-package')).toBe('ci-packer');
    expect(check.authorize(`bearer ${packer.token}`, 'workflow-inspect')).toBe('ci-packer');
    expect(check.authorize(`Bearer ${keys.token}`, 'key-gen')).toBe('keys');
  });

  it('S174 no token, another scheme, a wrong token, a token differing in its last byte → 401; another scope → 403', () => {
    const cases: [string | undefined, string, string][] = [
      [undefined, 'workflow-package', 'REQUEST_UNAUTHENTICATED'],
      ['', 'workflow-package', 'REQUEST_UNAUTHENTICATED'],
      [`Basic ${Buffer.from('a:b').toString('base64')}`, 'workflow-package', 'REQUEST_UNAUTHENTICATED'],
      ['Bearer', 'workflow-package', 'REQUEST_UNAUTHENTICATED'],
      [`Bearer ${newCallerToken(['package'], 'x').token}`, 'workflow-package', 'REQUEST_UNAUTHENTICATED'],
      [`Bearer ${lastByteFlipped(packer.token)}`, 'workflow-package', 'REQUEST_UNAUTHENTICATED'],
      [`Bearer ${tokenHash(packer.token)}`, 'workflow-package', 'REQUEST_UNAUTHENTICATED'],
      [`Bearer ${packer.token}`, 'string-encrypt', 'REQUEST_FORBIDDEN'],
      [`Bearer ${keys.token}`, 'workflow-package', 'REQUEST_FORBIDDEN'],
    ];
    for (const [header, op, code] of cases) {
      let caught: unknown;
      try {
        check.authorize(header, op);
      } catch (err) {
        caught = err;
      }
      expect(caught, `${header ?? '(none)'} ${op}`).toBeInstanceOf(RequestError);
      const err = caught as RequestError;
      expect(err.code).toBe(code);
      expect(err.headers?.['WWW-Authenticate']).toMatch(/^Bearer realm="packager"/);
      for (const t of [packer.token, keys.token]) {
        expect(err.message).not.toContain(t);
        expect(JSON.stringify(err.headers)).not.toContain(t);
      }
    }
  });

  it('S174 compares the presented digest with every record, whichever matches and however much is right', () => {
    const many = Array.from({ length: 5 }, (_, i) => newCallerToken(['package'], `t${i}`));
    const calls: number[] = [];
    let n = 0;
    const counted = createTokenCheck(parseTokenHashes(many.map((t) => t.record).join('\n')), {
      compare: (a, b) => {
        n++;
        return timingSafeEqual(a, b);
      },
    });
    const candidates = [
      ...many.map((t) => t.token),
      ...many.map((t) => lastByteFlipped(t.token)),
      'x',
      'a'.repeat(4000),
    ];
    for (const token of candidates) {
      n = 0;
      try {
        counted.authorize(`Bearer ${token}`, 'workflow-package');
      } catch {
        // refused: counted all the same
      }
      calls.push(n);
    }
    expect(new Set(calls)).toEqual(new Set([many.length]));
  });

  it('says invalid_token only when a token was presented, insufficient_scope with the scope (RFC 6750)', () => {
    const header = (authorization: string | undefined, op: string) => {
      try {
        check.authorize(authorization, op);
      } catch (err) {
        return (err as RequestError).headers?.['WWW-Authenticate'];
      }
      return undefined;
    };
    expect(header(undefined, 'workflow-hash')).toBe('Bearer realm="packager"');
    expect(header('Bearer', 'workflow-hash')).toBe('Bearer realm="packager"');
    expect(header('Bearer   ', 'workflow-hash')).toBe('Bearer realm="packager"');
    expect(header('Bearer nope', 'workflow-hash')).toBe('Bearer realm="packager", error="invalid_token"');
    expect(header(`Bearer ${keys.token}`, 'workflow-hash')).toBe(
      'Bearer realm="packager", error="insufficient_scope", scope="inspect"',
    );
  });

  it('refuses an empty list (no tokens is the front-end’s decision)', () => {
    expect(() => createTokenCheck([])).toThrow(RangeError);
  });
});

describe('the capability with callerTokenHashes', () => {
  const cap = createPackagerCapability();
  const dirs: PackagerDirs = { ...makeDirs(), callerTokenHashes: records };
  const srv = useCapabilityServer(
    () => cap,
    () => dirs,
  );

  it('checks the token before reading the request, and answers 401/403 problems', async () => {
    const none = await fetch(`${srv.url}/workflow-hash`, {
      method: 'POST',
      headers: { 'x-request-id': 'a1' },
    });
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer realm="packager"');
    expect(none.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(((await none.json()) as { code: string }).code).toBe('REQUEST_UNAUTHENTICATED');
    const other = await fetch(`${srv.url}/key-gen?purpose=sign`, {
      headers: { authorization: `Bearer ${packer.token}`, 'x-request-id': 'a2' },
    });
    expect(other.status).toBe(403);
    expect(((await other.json()) as { code: string }).code).toBe('REQUEST_FORBIDDEN');
    const ok = await fetch(`${srv.url}/key-gen?purpose=sign`, {
      headers: { authorization: `Bearer ${keys.token}`, 'x-request-id': 'a3' },
    });
    expect(ok.status).toBe(200);
    const health = await fetch(`${srv.url}/health`, { headers: { 'x-request-id': 'a4' } });
    expect(health.status).toBe(200);
  });

  it('checks a configuration as read uses it', () => {
    expect(() => cap.checkCallerTokens(records, 'x')).not.toThrow();
    expect(() => cap.checkCallerTokens(packer.token, 'data.callerTokenHashes')).toThrowCode(
      RequestError,
      'REQUEST_TOKEN_CONFIG_INVALID',
    );
  });
});
