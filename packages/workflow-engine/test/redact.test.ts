import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import {
  MAX_EVICTABLE_SECRETS,
  MAX_WHOLE_TEXT_CHARS,
  MIN_LEAF_CHARS,
  MIN_SECRET_CHARS,
  REDACTED,
  Redactor,
  SECRET_FORMS,
  SecretSet,
} from '../src/redact.js';

/** Secrets whose forms differ from each other: reserved URL characters, a space, a quote, a backslash, non-ASCII. */
const SECRETS = [
  'notExfiltratedAbc123',
  'p@ss/word+1 ~!',
  'quote"and\\backslash',
  'tab\tnewline\nctl\u0001',
  'ünïcødé-秘密-🔑',
];

/** Every tracked form of every sample secret: [form name, secret, encoded text]. */
const TABLE = SECRET_FORMS.flatMap(({ name, encode }) =>
  SECRETS.map((secret) => [name, secret, encode(secret)] as const),
);

describe('Redactor: the table of tracked forms (ADR 0054)', () => {
  it('tracks raw, Base64 (padded and unpadded), Base64url, URL-encoded, form-encoded and JSON-escaped forms', () => {
    expect(SECRET_FORMS.map((f) => f.name)).toEqual([
      'raw',
      'Base64',
      'Base64 unpadded',
      'Base64url',
      'URL-encoded',
      'form-encoded',
      'JSON-escaped',
      'JSON-escaped twice',
    ]);
    const forms = Object.fromEntries(SECRET_FORMS.map((f) => [f.name, f.encode('p@ss/word+1 ~!"?')]));
    expect(forms).toEqual({
      raw: 'p@ss/word+1 ~!"?',
      Base64: 'cEBzcy93b3JkKzEgfiEiPw==',
      'Base64 unpadded': 'cEBzcy93b3JkKzEgfiEiPw',
      Base64url: 'cEBzcy93b3JkKzEgfiEiPw',
      'URL-encoded': 'p%40ss%2Fword%2B1%20~!%22%3F',
      'form-encoded': 'p%40ss%2Fword%2B1+%7E%21%22%3F',
      'JSON-escaped': 'p@ss/word+1 ~!\\"?',
      'JSON-escaped twice': 'p@ss/word+1 ~!\\\\\\"?',
    });
  });

  it.each(TABLE)('redacts the %s form of %j', (_name, secret, form) => {
    const r = new Redactor();
    r.add(secret);
    const out = r.redact(`before ${form} after`);
    expect(out).toBe(`before ${REDACTED} after`);
    expect(r.strip(`k-${form}-v`)).toBe('k--v');
  });

  it('redacts a secret with a quote or backslash inside a JSON document logged as text, escaped once or twice', () => {
    const r = new Redactor();
    const secret = 'quote"and\\backslash';
    r.add(secret);
    const once = JSON.stringify({ clientSecret: secret });
    const twice = JSON.stringify({ body: once });
    expect(r.redact(once)).toBe(`{"clientSecret":"${REDACTED}"}`);
    expect(r.redact(twice)).toBe(`{"body":"{\\"clientSecret\\":\\"${REDACTED}\\"}"}`);
    // Three levels are not tracked; a line redacted before it is serialised (the agent's output) needs none.
    expect(JSON.stringify({ msg: r.redact(secret) })).toBe(`{"msg":"${REDACTED}"}`);
  });

  it('replaces overlapping occurrences of two secrets by one marker, leaving no part of either', () => {
    const r = new Redactor();
    r.add('abcd1234');
    r.add('1234wxyz');
    expect(r.redact('[abcd1234wxyz]')).toBe(`[${REDACTED}]`);
    expect(r.redact('abcd1234 1234wxyz')).toBe(`${REDACTED} ${REDACTED}`);
    expect(r.strip('xabcd1234wxyzy')).toBe('xy');
  });

  it('strips secrets from metric text and ignores values shorter than 4 characters', () => {
    const r = new Redactor();
    r.add('Abc123');
    expect(r.add('eu')).toBe(false);
    expect(MIN_SECRET_CHARS).toBe(4);
    expect(r.strip('notExfiltratedAbc123')).toBe('notExfiltrated');
    expect(r.strip(`key-${REDACTED}-Abc123`)).toBe('key--');
    expect(r.redact('eu-1')).toBe('eu-1');
  });

  it('rebuilds its pattern when a secret is added after use', () => {
    const r = new Redactor();
    expect(r.redact('first-secret second-secret')).toBe('first-secret second-secret');
    r.add('first-secret');
    expect(r.redact('first-secret second-secret')).toBe(`${REDACTED} second-secret`);
    r.add('second-secret');
    expect(r.redact('first-secret second-secret')).toBe(`${REDACTED} ${REDACTED}`);
    expect(r.add('second-secret')).toBe(false);
  });

  it('never leaves part of a secret at a cut', () => {
    const r = new Redactor();
    r.add('0123456789');
    expect(r.redactPrefix('xxxxx0123456789', 8)).toBe(`xxxxx${REDACTED.slice(0, 3)}`);
  });

  test.prop([
    fc.string({ minLength: MIN_SECRET_CHARS, maxLength: 40, unit: 'grapheme' }),
    fc.string({ maxLength: 30 }),
    fc.string({ maxLength: 30 }),
  ])('no tracked form survives redaction, whatever surrounds it', (secret, a, b) => {
    const r = new Redactor();
    r.add(secret);
    for (const { encode } of SECRET_FORMS) {
      const form = encode(secret);
      if (form.length < MIN_SECRET_CHARS || REDACTED.includes(form)) continue;
      expect(r.redact(a + form + b)).not.toContain(form);
    }
  });
});

describe('SecretSet', () => {
  it('forwards each value once, as is, and scrubs its forms', () => {
    const forwarded: string[] = [];
    const set = new SecretSet(new Redactor(), (v) => forwarded.push(v));
    set.add('hunter2-secret');
    set.add('hunter2-secret');
    expect(forwarded).toEqual(['hunter2-secret']);
    expect(set.scrub('a hunter2-secret b aHVudGVyMi1zZWNyZXQ= c')).toBe(`a ${REDACTED} b ${REDACTED} c`);
  });

  it('registers string leaves of restricted data and leaves short values unscrubbed', () => {
    const set = new SecretSet(new Redactor(), () => undefined);
    set.addLeaves({ a: 'abc', b: { c: ['longer-value'] } });
    expect(set.scrub('abc longer-value')).toBe(`abc ${REDACTED}`);
  });

  it('registers a received text and its values of 8+ characters, not numbers or protocol words', () => {
    const forwarded: string[] = [];
    const set = new SecretSet(new Redactor(), (v) => forwarded.push(v));
    const json = '{"access_token":"tok-123456","token_type":"Bearer","expires_in":3600}';
    set.addText(json);
    expect(forwarded).toEqual([json, 'tok-123456']);
    expect(set.scrub('Bearer tok-123456 for 3600 s')).toBe(`Bearer ${REDACTED} for 3600 s`);
    const form = 'access_token=form-token-1%2B2&token_type=bearer';
    set.addText(form);
    expect(forwarded.slice(2)).toEqual([form, 'form-token-1+2']);
    set.addText('x'.repeat(MAX_WHOLE_TEXT_CHARS + 1));
    expect(forwarded).toHaveLength(4);
    expect(MIN_LEAF_CHARS).toBe(8);
  });

  it('shares its redactor with the app', () => {
    const shared = new Redactor();
    new SecretSet(shared, () => undefined).add('shared-secret');
    expect(shared.redact('a shared-secret')).toBe(`a ${REDACTED}`);
  });
});

describe('Redactor: review findings', () => {
  it('strip cannot be re-joined around a removed copy into the secret', () => {
    const r = new Redactor();
    const d = 'client-secret-Zq81xW';
    r.add(d);
    expect(r.strip(d.slice(0, 3) + d + d.slice(3))).not.toContain(d);
    expect(r.strip(d.slice(0, 5) + d + d.slice(5))).not.toContain(d);
    expect(r.strip(`ab${REDACTED}cd`)).toBe('abcd');
    r.add('abcd');
    expect(r.strip(`ab${REDACTED}cd`)).toBe('');
    expect(r.strip('metric.name')).toBe('metric.name');
  });

  it('keeps at most MAX_EVICTABLE_SECRETS evictable values, never evicts pinned ones, and still finds new ones', () => {
    const r = new Redactor();
    r.add('pinned-bootstrap-secret');
    for (let i = 0; i < MAX_EVICTABLE_SECRETS + 100; i++)
      r.add(`per-request-signature-${i}`, { evictable: true });
    expect(r.redact('per-request-signature-0 x')).toBe('per-request-signature-0 x');
    expect(r.redact(`per-request-signature-${MAX_EVICTABLE_SECRETS + 99} x`)).toBe(`${REDACTED} x`);
    expect(r.redact('pinned-bootstrap-secret x')).toBe(`${REDACTED} x`);
    // A pinned value that was also registered as evictable stays pinned.
    r.add('both-ways-secret');
    for (let i = 0; i < MAX_EVICTABLE_SECRETS + 1; i++)
      r.add(i === 0 ? 'both-ways-secret' : `v-${i}-xxxx`, { evictable: true });
    expect(r.redact('both-ways-secret')).toBe(REDACTED);
  });

  it('finds secrets added after a fold and before the next one alike', () => {
    const r = new Redactor();
    const all: string[] = [];
    for (let i = 0; i < 300; i++) {
      const v = `secret-value-${i}-zz`;
      all.push(v);
      r.add(v);
      if (i % 37 === 0) r.redact('warm');
    }
    for (const v of all) expect(r.redact(`a ${v} b`)).toBe(`a ${REDACTED} b`);
  });
});
