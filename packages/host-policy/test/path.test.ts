import { describe, expect, it } from 'vitest';
import type { OutboundDecision } from '../src/index.js';
import { checkOutboundCall, compileHostPolicy, MAX_PATH_CHARS } from '../src/index.js';
import { H1 } from './fixtures.js';

const policy = compileHostPolicy([
  H1,
  { id: 'open', host: 'https://api.example.com/v1/' },
  { id: 'noslash', host: 'https://api.example.com/v1' },
  { id: 'root', host: 'https://api.example.com' },
]);

function decide(path: string, hostId = 'open', method = 'GET'): OutboundDecision {
  return checkOutboundCall(policy, { hostId, path, method });
}

function urlOf(path: string, hostId = 'open'): string {
  const d = decide(path, hostId);
  if (!d.allowed) throw new Error(`expected allowed, got ${d.code} ${d.rule}`);
  return d.url;
}

function codeOf(path: string, hostId = 'open'): string {
  const d = decide(path, hostId);
  return d.allowed ? 'ALLOWED' : d.code;
}

describe('path composition', () => {
  it('S27: joins users/42 to https://api.example.com/v1/users/42', () => {
    expect(urlOf('users/42', 'h1')).toBe('https://api.example.com/v1/users/42');
  });

  it('tolerates one leading slash and joins with exactly one slash', () => {
    expect(urlOf('/users/42')).toBe('https://api.example.com/v1/users/42');
    expect(urlOf('/users/42', 'noslash')).toBe('https://api.example.com/v1/users/42');
    expect(urlOf('users/42', 'root')).toBe('https://api.example.com/users/42');
  });

  it('joins to a base without trailing slash with one slash; an empty path is the base itself', () => {
    expect(urlOf('users', 'noslash')).toBe('https://api.example.com/v1/users');
    expect(urlOf('', 'noslash')).toBe('https://api.example.com/v1');
    expect(urlOf('', 'open')).toBe('https://api.example.com/v1/');
    expect(urlOf('?q=1', 'noslash')).toBe('https://api.example.com/v1?q=1');
  });

  it('keeps a query, which may contain / ? and encoded separators', () => {
    expect(urlOf('users/1?next=/v1/x?y=%2F%2e')).toBe(
      'https://api.example.com/v1/users/1?next=/v1/x?y=%2F%2e',
    );
  });

  it('allows ordinary escapes, a trailing slash, sub-delims and a colon after the first segment', () => {
    expect(urlOf('files/a%20b/')).toBe('https://api.example.com/v1/files/a%20b/');
    expect(urlOf("a/b:c/@me/!$&'()*+,;=~")).toBe("https://api.example.com/v1/a/b:c/@me/!$&'()*+,;=~");
    expect(urlOf('.well-known/x')).toBe('https://api.example.com/v1/.well-known/x');
  });
});

describe('path rejections', () => {
  it('S30: users/1/../../admin is rejected (dot segment), admin/x?y=/v1/users/1 does not match the allowList', () => {
    expect(codeOf('users/1/../../admin', 'h1')).toBe('POLICY_PATH_ESCAPES_BASE');
    expect(codeOf('admin/x?y=/v1/users/1', 'h1')).toBe('POLICY_PATH_NOT_ALLOWED');
  });

  it.each(['../admin', '%2e%2e/admin', '.%2e/admin', '%2E%2E/admin', 'users/%2e%2e/%2e%2e/admin'])(
    'S31: rejects %s with POLICY_PATH_ESCAPES_BASE',
    (path) => {
      expect(codeOf(path, 'h1')).toBe('POLICY_PATH_ESCAPES_BASE');
      expect(codeOf(path, 'open')).toBe('POLICY_PATH_ESCAPES_BASE');
    },
  );

  it.each([
    '.',
    '..',
    'a/.',
    'a/..',
    'a/./b',
    '..;/admin',
    'a/..;x/b',
    '%2e',
    'a%2fb',
    'a%2Fb',
    'a%5cb',
    'a%5Cb',
  ])('S31: rejects the dot segment or encoded separator in %s', (path) =>
    expect(codeOf(path)).toBe('POLICY_PATH_ESCAPES_BASE'),
  );

  it.each(['//evil.com/x', '\\\\evil.com/x', '/\\evil.com', '\\evil.com', 'a\\b'])(
    'S32: rejects %s with POLICY_PATH_ESCAPES_BASE',
    (path) => expect(codeOf(path)).toBe('POLICY_PATH_ESCAPES_BASE'),
  );

  it.each([
    'https://evil.com/',
    'http:evil.com',
    'javascript:alert(1)',
    'HTTPS://evil.com',
    'mailto:a@b',
    '/http:x',
  ])('S33: rejects the scheme-like path %s', (path) => expect(codeOf(path)).toBe('POLICY_PATH_ESCAPES_BASE'));

  it.each(['@evil.com/x', '.evil.com/x', ':8443/x', '/@evil.com', '/.evil.com'])(
    'S34: rejects %s on a base without trailing slash, keeping scheme, host and port',
    (path) => {
      const d = decide(path, 'noslash');
      expect(d).toMatchObject({ allowed: false, code: 'POLICY_PATH_ESCAPES_BASE', hostId: 'noslash' });
    },
  );

  it('S34: the same prefixes stay inside the base when it ends with a slash', () => {
    expect(urlOf('@evil.com/x')).toBe('https://api.example.com/v1/@evil.com/x');
    expect(urlOf('.evil.com/x')).toBe('https://api.example.com/v1/.evil.com/x');
    expect(codeOf(':8443/x')).toBe('POLICY_PATH_ESCAPES_BASE');
  });

  it.each([
    ['CRLF', 'users/1\r\nX-Injected: 1'],
    ['TAB', 'users/1\tX-Injected: 1'],
    ['NUL', 'users/1\u0000X-Injected: 1'],
    ['LF in query', 'users/1?a=\n'],
    ['DEL', 'users/1\u007f'],
  ])('S35: rejects a path with %s (not stripped) with POLICY_PATH_INVALID', (_name, path) => {
    expect(decide(path, 'h1')).toMatchObject({
      allowed: false,
      code: 'POLICY_PATH_INVALID',
      rule: 'path-control-char',
    });
  });

  it.each([
    ['encoded CR', 'users/1%0d%0a', 'path-encoded-control'],
    ['encoded NUL', 'users/%00', 'path-encoded-control'],
    ['double encoding', '%252e%252e/admin', 'path-double-encoding'],
    ['space', 'a b', 'path-char'],
    ['non-ASCII', 'caf\u00e9', 'path-char'],
    ['fragment', 'a#b', 'path-fragment'],
    ['bad escape', 'a%zz', 'path-bad-escape'],
    ['truncated escape', 'a%2', 'path-bad-escape'],
    ['interior //', 'a//b', 'path-empty-segment'],
    ['angle bracket', 'a<b', 'path-char'],
  ])('S35: rejects %s with POLICY_PATH_INVALID', (_name, path, rule) => {
    expect(decide(path)).toMatchObject({ allowed: false, code: 'POLICY_PATH_INVALID', rule });
  });

  it('rejects a path one character over MAX_PATH_CHARS and accepts one at the cap', () => {
    expect(codeOf('a'.repeat(MAX_PATH_CHARS))).toBe('ALLOWED');
    expect(decide('a'.repeat(MAX_PATH_CHARS + 1))).toMatchObject({
      code: 'POLICY_PATH_INVALID',
      rule: 'path-length',
    });
  });

  it('treats a non-string path as POLICY_PATH_INVALID', () => {
    expect(
      checkOutboundCall(policy, { hostId: 'open', path: 42 as unknown as string, method: 'GET' }),
    ).toMatchObject({
      code: 'POLICY_PATH_INVALID',
      rule: 'path-type',
    });
  });
});
