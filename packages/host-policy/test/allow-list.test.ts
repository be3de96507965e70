import { describe, expect, it } from 'vitest';
import type { HostEntry } from '../src/index.js';
import {
  checkOutboundCall,
  compileHostPolicy,
  MAX_PATH_CHARS,
  MAX_PATTERN_CHARS,
  PolicyError,
} from '../src/index.js';

const withPattern = (uriPattern: string, method = 'GET'): HostEntry => ({
  id: 'x',
  host: 'https://api.example.com/v1/',
  allowList: [{ method, uriPattern }],
});

const decide = (uriPattern: string, path: string) => {
  const d = checkOutboundCall(compileHostPolicy([withPattern(uriPattern)]), {
    hostId: 'x',
    path,
    method: 'GET',
  });
  return d.allowed ? 'ALLOWED' : d.code;
};

describe('allowList anchoring', () => {
  it('S30: anchors the pattern on the whole normalised pathname, base path included', () => {
    expect(decide('/v1/users/[0-9]+', 'users/1')).toBe('ALLOWED');
    expect(decide('/v1/users/[0-9]+', 'users/1/admin')).toBe('POLICY_PATH_NOT_ALLOWED');
    expect(decide('/v1/users/[0-9]+', 'admin/v1/users/1')).toBe('POLICY_PATH_NOT_ALLOWED');
    expect(decide('users/[0-9]+', 'users/1')).toBe('POLICY_PATH_NOT_ALLOWED');
    expect(decide('.*users/[0-9]+', 'users/1')).toBe('ALLOWED');
  });

  it('S30: an alternation cannot escape the anchors', () => {
    expect(decide('/v1/a|/v1/b', 'b')).toBe('ALLOWED');
    expect(decide('/v1/a|/v1/b', 'b/admin')).toBe('POLICY_PATH_NOT_ALLOWED');
    expect(decide('/v1/a|/v1/b', 'xa')).toBe('POLICY_PATH_NOT_ALLOWED');
  });

  it('S30: the query is never matched by the allowList', () => {
    expect(decide('/v1/users/[0-9]+', 'users/1?role=admin')).toBe('ALLOWED');
    expect(decide('/v1/users/[0-9]+\\?x=1', 'users/1?x=1')).toBe('POLICY_PATH_NOT_ALLOWED');
  });

  it('S30: a pattern cannot close the anchoring group early', () => {
    expect(() => compileHostPolicy([withPattern('/v1/a)|(.*')])).toThrowCode(
      PolicyError,
      'POLICY_CONFIG_INVALID',
    );
  });

  it('keeps each pattern separate when they reuse a group name (no combined regex)', () => {
    const policy = compileHostPolicy([
      {
        id: 'x',
        host: 'https://api.example.com/v1/',
        allowList: [
          { method: 'GET', uriPattern: '/v1/a/(?<id>[0-9]+)' },
          { method: 'GET', uriPattern: '/v1/b/(?<id>[0-9]+)' },
          { method: 'PUT', uriPattern: '/v1/c|/v1/d' },
        ],
      },
    ]);
    const code = (path: string, method = 'GET') => {
      const d = checkOutboundCall(policy, { hostId: 'x', path, method });
      return d.allowed ? 'ALLOWED' : d.code;
    };
    expect([code('a/1'), code('b/2'), code('b/x'), code('c'), code('c', 'PUT'), code('d/x', 'PUT')]).toEqual([
      'ALLOWED',
      'ALLOWED',
      'POLICY_PATH_NOT_ALLOWED',
      'POLICY_METHOD_NOT_ALLOWED',
      'ALLOWED',
      'POLICY_PATH_NOT_ALLOWED',
    ]);
  });

  it('an empty allowList allows nothing (an absent one allows everything)', () => {
    const policy = compileHostPolicy([{ id: 'x', host: 'https://a.example/', allowList: [] }]);
    expect(checkOutboundCall(policy, { hostId: 'x', path: 'a', method: 'GET' })).toMatchObject({
      code: 'POLICY_METHOD_NOT_ALLOWED',
    });
  });

  it('legacy patterns such as /.*/oauth2/.* compile and match', () => {
    expect(decide('/.*/oauth2/.*', 'tenant/oauth2/token')).toBe('ALLOWED');
  });
});

describe('allowList pattern guard', () => {
  it.each([
    ['nested quantifier', '(a+)+'],
    ['nested star', '/v1/(x*)*'],
    ['quantified alternation', '/v1/(a|aa)+'],
    ['quantified alternation with braces', '/v1/(?:a|b){2,}'],
    ['three unbounded quantifiers', '/v1/.*a.*b.*'],
    ['three bounded but huge quantifiers', '/v1/[a-z]{1,1000}[a-z]{1,1000}[a-z]{1,1000}'],
    ['lookahead', '/v1/(?=x).*'],
    ['negative lookahead', '/v1/(?!x).*'],
    ['lookbehind', '/v1/(?<=x)y'],
    ['backreference', '/v1/(a)\\1'],
    ['named backreference', '/v1/(?<n>a)\\k<n>'],
    ['invalid regex', '/v1/[a-'],
    ['empty pattern', ''],
    ['too long', `/${'a'.repeat(MAX_PATTERN_CHARS)}`],
  ])('refuses a pattern with %s with POLICY_CONFIG_INVALID', (_name, pattern) => {
    expect(() => compileHostPolicy([withPattern(pattern)])).toThrowCode(PolicyError, 'POLICY_CONFIG_INVALID');
  });

  it('refuses a non-string pattern', () => {
    expect(() => compileHostPolicy([withPattern(3 as unknown as string)])).toThrowCode(
      PolicyError,
      'POLICY_CONFIG_INVALID',
    );
  });

  it('names the entry and field of a refused pattern', () => {
    try {
      compileHostPolicy([
        {
          id: 'x',
          host: 'https://a.example/',
          allowList: [
            { method: 'GET', uriPattern: '/' },
            { method: 'GET', uriPattern: '(a+)+' },
          ],
        },
      ]);
      expect.unreachable();
    } catch (err) {
      expect((err as PolicyError).details).toMatchObject({
        hostId: 'x',
        index: 0,
        field: 'allowList[1].uriPattern',
        rule: 'allow-list-pattern',
      });
    }
  });

  it.each([
    '/v1/users/[0-9]+',
    '/v1/users/[0-9]{1,20}/orders/[0-9]{1,20}/items/[a-z]{1,20}',
    '/v1/(?:a|b)/[^/]+',
    '/v1/(?<id>[0-9]+)?',
    '/v1/files/[^/]+\\.json',
    '/v1/x{2}/y{1,}',
    '/v1/{literal}',
    '/v1/[\\]]+',
  ])('accepts the well-behaved pattern %s', (pattern) => {
    expect(() => compileHostPolicy([withPattern(pattern)])).not.toThrow();
  });

  it('bounds the worst case: the costliest accepted shape on a maximal path finishes quickly', () => {
    const policy = compileHostPolicy([withPattern('/v1/.*a.*b')]);
    const path = 'a'.repeat(MAX_PATH_CHARS - 1);
    const t0 = performance.now();
    const d = checkOutboundCall(policy, { hostId: 'x', path, method: 'GET' });
    const ms = performance.now() - t0;
    expect(d).toMatchObject({ code: 'POLICY_PATH_NOT_ALLOWED' });
    expect(ms).toBeLessThan(2000);
  });
});
