import { parseKey } from '@org/envelope-crypto';
import { PROTOTYPE_NAMES } from '@org/test-utils';
import { describe, expect, it } from 'vitest';
import { problem, useServer, type Body } from './helpers.js';

const srv = useServer();
const get = (q: string, headers: Record<string, string> = {}) => fetch(`${srv.url}/key-gen${q}`, { headers });

describe('GET /key-gen', () => {
  it.each([
    ['sign', 64, 128],
    ['authenticated', 64, 64],
    ['anonymous', 64, 64],
    ['symmetric', null, 64],
  ] as const)('generates a %s key pair in the documented shape', async (purpose, pubLen, secLen) => {
    const res = await get(`?purpose=${purpose}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const body = (await res.json()) as Body;
    expect(body).toMatchObject({ ok: true, purpose, encoding: 'hex' });
    expect(Object.keys(body.keyPair).sort()).toEqual(['publicKeyHex', 'secretKeyHex']);
    expect(body.keyPair.secretKeyHex).toMatch(new RegExp(`^[0-9a-f]{${secLen}}$`));
    if (pubLen === null) expect(body.keyPair.publicKeyHex).toBeNull();
    else expect(body.keyPair.publicKeyHex).toMatch(/^[0-9a-f]{64}$/);
    // The secret parses strictly (for sign: its public half matches its seed).
    parseKey({ purpose, type: 'secret', keyHex: body.keyPair.secretKeyHex });
  });

  it.each([
    ['box', 'authenticated'],
    ['secretbox', 'symmetric'],
  ])('accepts the alias %s and echoes %s', async (alias, canonical) => {
    const body = (await (await get(`?purpose=${alias}`)).json()) as Body;
    expect(body.purpose).toBe(canonical);
  });

  it('answers a missing purpose with 400 REQUEST_MISSING_PURPOSE plus the compatibility members', async () => {
    const res = await get('');
    const body = await problem(res);
    expect(res.status).toBe(400);
    expect(body.code).toBe('REQUEST_MISSING_PURPOSE');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(body.ok).toBe(false);
    expect(body.error).toMatchObject({
      code: 'missing_purpose',
      allowedPurposes: ['sign', 'authenticated', 'anonymous', 'symmetric'],
    });
  });

  it('answers an unknown purpose with 400 REQUEST_INVALID_PURPOSE / invalid_purpose', async () => {
    const res = await get('?purpose=rsa');
    const body = await problem(res);
    expect(res.status).toBe(400);
    expect(body.code).toBe('REQUEST_INVALID_PURPOSE');
    expect(body.error.code).toBe('invalid_purpose');
  });

  // Regression: the alias lookup read inherited properties, so `purpose=toString` answered 500.
  it.each(PROTOTYPE_NAMES)(
    'answers purpose=%s with 400 REQUEST_INVALID_PURPOSE (no inherited lookup)',
    async (name) => {
      const res = await get(`?purpose=${encodeURIComponent(name)}`);
      expect(res.status).toBe(400);
      expect((await problem(res)).code).toBe('REQUEST_INVALID_PURPOSE');
    },
  );

  it('answers a repeated purpose with 400 REQUEST_INVALID_PURPOSE', async () => {
    const res = await get('?purpose=sign&purpose=sign');
    expect(res.status).toBe(400);
    expect((await problem(res)).code).toBe('REQUEST_INVALID_PURPOSE');
  });

  it('rejects Accept: text/plain with REQUEST_NOT_ACCEPTABLE', async () => {
    const res = await get('?purpose=sign', { accept: 'text/plain' });
    expect(res.status).toBe(406);
    expect((await problem(res)).code).toBe('REQUEST_NOT_ACCEPTABLE');
  });

  it('generates a different key every time', async () => {
    const a = (await (await get('?purpose=authenticated')).json()) as Body;
    const b = (await (await get('?purpose=authenticated')).json()) as Body;
    expect(a.keyPair.secretKeyHex).not.toBe(b.keyPair.secretKeyHex);
  });
});
