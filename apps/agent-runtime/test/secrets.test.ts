import { parseKeyTuple } from '@org/envelope-crypto';
import type { DeploymentRecord } from '@org/workflow-compiler';
import { describe, expect, it } from 'vitest';
import { REDACTED, Redactor } from '@org/workflow-engine';
import { createStringDecryptor, readRestrictedData, registerRecordSecrets } from '@org/workflow-runtime';
import { encrypted, makeKeys, tuple } from './fixtures.js';

const keys = makeKeys();
const candidates = [parseKeyTuple(tuple(keys.packager, keys.agent))];

function record(
  data: Record<string, unknown>,
  authenticationHost: boolean | string = true,
): DeploymentRecord {
  return {
    deploymentId: 'dep-1',
    remoteConfiguration: 'x.oapp',
    allowExternalHostAccess: [
      { id: 'idp', host: 'http://127.0.0.1:1/', authenticationHost, data: data as never },
      { id: 'api', host: 'http://127.0.0.1:1/', headers: { Authorization: 'Basic c2VjcmV0LXZhbHVl' } },
    ],
  };
}

describe('Redactor', () => {
  it('redacts a secret and its Base64, Base64url and URL-encoded forms', () => {
    const r = new Redactor();
    r.add('p@ss/word+1');
    const b64 = Buffer.from('p@ss/word+1').toString('base64');
    const line = `a p@ss/word+1 b ${b64} c ${encodeURIComponent('p@ss/word+1')} d`;
    expect(r.redact(line)).toBe(`a ${REDACTED} b ${REDACTED} c ${REDACTED} d`);
  });

  it('strips secrets from metric text and ignores values shorter than 4 characters', () => {
    const r = new Redactor();
    r.add('Abc123');
    r.add('eu');
    expect(r.strip('notExfiltratedAbc123')).toBe('notExfiltrated');
    expect(r.redact('eu-1')).toBe('eu-1');
  });
});

describe('readRestrictedData', () => {
  it('decrypts -2/ values at the call, registers the plaintext, leaves other values', () => {
    const d = createStringDecryptor(candidates);
    const r = new Redactor();
    const rec = record({ clientId: 'client-1', nested: { secret: encrypted(keys, 'top-secret-value') } });
    registerRecordSecrets(rec, r);
    expect(d.calls).toBe(0);
    const text = readRestrictedData(rec, 'idp', d, r);
    expect(JSON.parse(text)).toEqual({ clientId: 'client-1', nested: { secret: 'top-secret-value' } });
    expect(d.calls).toBe(1);
    expect(r.redact('x top-secret-value client-1')).toBe(`x ${REDACTED} ${REDACTED}`);
  });

  it('names host and field when no candidate opens the string, never the value (S46)', () => {
    const other = makeKeys();
    const d = createStringDecryptor([parseKeyTuple(tuple(other.packager, other.agent))]);
    const rec = record({ clientSecret: encrypted(keys, 'top-secret-value') });
    try {
      readRestrictedData(rec, 'idp', d, new Redactor());
      expect.unreachable();
    } catch (err) {
      const e = err as { code: string; message: string };
      expect(e.code).toBe('AGENT_RESTRICTED_DATA_FAILED');
      expect(e.message).toContain('"idp"');
      expect(e.message).toContain('/clientSecret');
      expect(e.message).toContain('CRYPTO_AUTH_FAILED');
    }
  });

  it('refuses a truncated -2/ string at access (S47)', () => {
    const d = createStringDecryptor(candidates);
    const rec = record({ s: '-2/' + Buffer.alloc(30).toString('base64') });
    expect(() => readRestrictedData(rec, 'idp', d, new Redactor())).toThrow(/CRYPTO_TRUNCATED/);
  });

  it('reads the data of any declared host, authenticationHost or not (docs/interfaces.md §3.3, ADR 0081)', () => {
    const d = createStringDecryptor(candidates);
    const r = new Redactor();
    const rec = record({ apiKey: encrypted(keys, 'plain-host-secret') }, false);
    registerRecordSecrets(rec, r);
    expect(d.calls).toBe(0);
    expect(JSON.parse(readRestrictedData(rec, 'idp', d, r))).toEqual({ apiKey: 'plain-host-secret' });
    expect(d.calls).toBe(1);
    expect(r.redact('key plain-host-secret')).toBe(`key ${REDACTED}`);
  });

  it('refuses a host that is not declared, decrypting nothing', () => {
    const d = createStringDecryptor(candidates);
    const rec = record({ s: encrypted(keys, 'top-secret-value') });
    expect(() => readRestrictedData(rec, 'nope', d, new Redactor())).toThrow(
      expect.objectContaining({ code: 'AGENT_RESTRICTED_DATA_NOT_ALLOWED' }),
    );
    expect(d.calls).toBe(0);
  });

  it('never decrypts a -2/ string outside host data: a fixed header stays literal (S48)', () => {
    const d = createStringDecryptor(candidates);
    const secretHeader = encrypted(keys, 'top-secret-value');
    const rec: DeploymentRecord = {
      deploymentId: 'dep-1',
      remoteConfiguration: 'x.oapp',
      allowExternalHostAccess: [
        { id: 'api', host: 'http://127.0.0.1:1/', headers: { 'X-Key': secretHeader } },
      ],
    };
    expect(readRestrictedData(rec, 'api', d, new Redactor())).toBe('{}');
    expect(rec.allowExternalHostAccess?.[0]?.headers?.['X-Key']).toBe(secretHeader);
    expect(d.calls).toBe(0);
  });

  it('registers fixed header values at load without decrypting (S50)', () => {
    const r = new Redactor();
    registerRecordSecrets(record({}), r);
    expect(r.redact('Authorization: Basic c2VjcmV0LXZhbHVl')).toBe(`Authorization: ${REDACTED}`);
  });
});

describe('which fixed header values are secrets (ADR 0127, issue 27)', () => {
  it('hides credential headers and -2/ texts, keeps configuration values and the ids containing them greppable', () => {
    const r = new Redactor();
    const sealed = encrypted(keys, 'sealed-header-value');
    registerRecordSecrets(
      {
        deploymentId: 'readings-api-eu-1',
        remoteConfiguration: 'readings-api.oapp',
        allowExternalHostAccess: [
          {
            id: 'ledger',
            host: 'https://ledger.example.com',
            headers: {
              'X-Client': 'readings-api',
              'X-Format': 'v-plain-header',
              'X-Sealed': sealed,
              Authorization: 'Bearer fixed-secret-9d2c',
              'X-Api-Key': 'key-material-77',
              'x-auth-token': 'tok-material-88',
              Cookie: 'sess-cookie-42',
              'Proxy-Authorization': 'Basic cHJveHk6cGFzcw==',
            },
          },
        ],
      },
      r,
    );
    const line =
      '{"deploymentId":"readings-api-eu-1","server":"readings-api","x":"v-plain-header Bearer fixed-secret-9d2c key-material-77 tok-material-88 sess-cookie-42 Basic cHJveHk6cGFzcw== ' +
      sealed +
      '"}';
    expect(r.redact(line)).toBe(
      `{"deploymentId":"readings-api-eu-1","server":"readings-api","x":"v-plain-header ${REDACTED} ${REDACTED} ${REDACTED} ${REDACTED} ${REDACTED} ${REDACTED}"}`,
    );
  });
});
