import { fc, test } from '@fast-check/vitest';
import { describe, expect } from 'vitest';
import type { HostPolicy, OutboundDecision } from '../src/index.js';
import { checkOutboundCall, compileHostPolicy } from '../src/index.js';

const numRuns = process.env['SLOW'] ? 20_000 : 300;

const BASES = ['https://api.example.com/v1/', 'https://api.example.com/v1', 'http://api.example.com:8080'];
const ALLOW = [
  { method: 'GET', uriPattern: '/v1/users/[0-9]+' },
  { method: 'POST', uriPattern: '/v1/items' },
  { method: 'GET', uriPattern: '/.*' },
];

const policyFor = (host: string, allowList?: typeof ALLOW): HostPolicy =>
  compileHostPolicy([{ id: 'h', host, ...(allowList ? { allowList } : {}) }]);

const summary = (d: OutboundDecision) => (d.allowed ? `ok ${d.method} ${d.url}` : `${d.code} ${d.rule}`);

/** Path characters weighted towards the ones attacks are made of. */
const dangerous = fc.constantFrom(
  ...['/', '/', '.', '.', '%', '2', 'e', 'E', 'f', 'F', '5', 'c', 'C', '\\', '@', ':', '?', '#', ';', '~'],
  ...['a', 'b', 'h', 't', 'p', 's', ' ', '\r', '\n', '\t', '\u0000', '\u00e9', '\uff0e', '\u2215', '0', '1'],
);
const attackPath = fc.oneof(
  fc.array(dangerous, { maxLength: 40 }).map((a) => a.join('')),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc
    .array(
      fc.constantFrom('..', '.', '%2e', '%2E%2e', 'users', '42', '', 'a:b', '@x', '\\', '//', '%2f', '%5C'),
      { maxLength: 8 },
    )
    .map((a) => a.join('/')),
);

/** Letter-case variants of a base URL, with or without a trailing dot on the host. */
const baseVariant = fc
  .tuple(fc.constantFrom(...BASES), fc.array(fc.boolean(), { minLength: 40, maxLength: 40 }), fc.boolean())
  .map(([base, flips, dot]) => {
    const url = new URL(base);
    const authorityEnd = base.indexOf('/', base.indexOf('//') + 2);
    const head = (authorityEnd < 0 ? base : base.slice(0, authorityEnd)).replace(
      url.hostname,
      url.hostname + (dot ? '.' : ''),
    );
    const cased = [...head].map((ch, i) => (flips[i] ? ch.toUpperCase() : ch)).join('');
    return { base, variant: cased + (authorityEnd < 0 ? '' : base.slice(authorityEnd)) };
  });

describe('checkOutboundCall properties', () => {
  test.prop([baseVariant, attackPath, fc.constantFrom('GET', 'get', 'Post', 'DELETE')], { numRuns })(
    'decisions do not change with the letter case of scheme and host or a trailing dot on the host',
    ({ base, variant }, path, method) => {
      for (const allowList of [undefined, ALLOW]) {
        const a = checkOutboundCall(policyFor(base, allowList), { hostId: 'h', path, method });
        const b = checkOutboundCall(policyFor(variant, allowList), { hostId: 'h', path, method });
        expect(summary(b)).toBe(summary(a));
      }
    },
  );

  test.prop([fc.constantFrom(...BASES), attackPath], { numRuns })(
    'random paths never yield an allowed URL outside the base (WHATWG URL agrees)',
    (base, path) => {
      const d = checkOutboundCall(policyFor(base), { hostId: 'h', path, method: 'GET' });
      if (!d.allowed) return;
      const baseUrl = new URL(base);
      const url = new URL(d.url);
      expect(url.origin).toBe(baseUrl.origin);
      expect(url.pathname).toBe(d.pathname);
      const prefix = baseUrl.pathname.endsWith('/') ? baseUrl.pathname : `${baseUrl.pathname}/`;
      expect(url.pathname === baseUrl.pathname || url.pathname.startsWith(prefix)).toBe(true);
      expect(d.url).not.toMatch(/[\r\n\t\0\\ #]/);
      const segments = d.pathname.split('/');
      expect(segments.filter((s) => s === '.' || s === '..')).toEqual([]);
    },
  );

  test.prop(
    [
      fc.string({ unit: 'binary', maxLength: 20 }),
      fc.string({ unit: 'binary', maxLength: 60 }),
      fc.string({ unit: 'binary', maxLength: 10 }),
      fc.dictionary(
        fc.string({ unit: 'binary', maxLength: 12 }),
        fc.string({ unit: 'binary', maxLength: 12 }),
        { maxKeys: 4 },
      ),
      fc.boolean(),
    ],
    { numRuns },
  )(
    'never throws on arbitrary workflow input and always answers with a stable code',
    (hostId, path, method, headers, auth) => {
      const policy = policyFor(BASES[0]!, ALLOW);
      const d = checkOutboundCall(policy, { hostId, path, method, headers, isAuthenticationProcessor: auth });
      if (!d.allowed) expect(d.code).toMatch(/^POLICY_[A-Z_]+$/);
    },
  );
});
