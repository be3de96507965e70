import { createPackage } from '@org/oapp-format';
import { generateKeyPair } from '@org/envelope-crypto';
import { describe, expect, it } from 'vitest';
import {
  INSPECT_QUERY_PARAMETERS,
  inspectFreshnessOf,
  isRequestError,
  workflowInspect,
} from '../src/index.js';

// The query of /workflow-inspect (issue 29): parsed strictly into the freshness inputs of the rollback verdict.

function refusal(query: string) {
  try {
    inspectFreshnessOf(query);
  } catch (err) {
    if (!isRequestError(err)) throw err;
    return { code: err.code, message: err.message, errors: err.errors };
  }
  throw new Error(`${query} was accepted`);
}

describe('inspectFreshnessOf', () => {
  it('no parameter → undefined (no verdict asked)', () => {
    expect(inspectFreshnessOf(undefined)).toBeUndefined();
    expect(inspectFreshnessOf(null)).toBeUndefined();
    expect(inspectFreshnessOf('')).toBeUndefined();
    expect(inspectFreshnessOf('&')).toBeUndefined();
  });

  it('parses every parameter; the newest digest in lower case, absent when not given', () => {
    const sha = 'AB'.repeat(32);
    expect(
      inspectFreshnessOf(
        `minimumSequence=007&newest=9007199254740991:${sha}&now=2027-01-31T12:00:00Z&clockSkewSeconds=86400`,
      ),
    ).toEqual({
      minimumSequence: 7,
      newest: { sequence: Number.MAX_SAFE_INTEGER, contentSha256: sha.toLowerCase() },
      now: new Date('2027-01-31T12:00:00.000Z'),
      clockSkewSeconds: 86400,
    });
    expect(inspectFreshnessOf('newest=0')).toEqual({ newest: { sequence: 0, contentSha256: undefined } });
    expect(inspectFreshnessOf('now=2027-01-31T12:00:00.123Z')).toEqual({
      now: new Date('2027-01-31T12:00:00.123Z'),
    });
  });

  it('names the parameters it takes', () => {
    expect(INSPECT_QUERY_PARAMETERS).toEqual(['minimumSequence', 'newest', 'now', 'clockSkewSeconds']);
  });

  it.each([
    ['minimumSequence=x', '/minimumSequence', 'must be a whole number'],
    ['minimumSequence=99999999999999999', '/minimumSequence', 'must be a whole number'],
    ['newest=1:zz', '/newest', 'must be SEQUENCE or SEQUENCE:SHA256'],
    ['now=2027-01-31T24:00:00Z', '/now', 'must be a UTC time'],
    ['clockSkewSeconds=99999', '/clockSkewSeconds', 'must be a whole number from 0 to 86400'],
    ['now=2027-01-31T12:00:00Z&now=2027-01-31T12:00:00Z', '/now', 'must appear once'],
    ['sequence=1', '/sequence', 'is not a known parameter'],
    ['=1', '/', 'is not a known parameter'],
  ])('%s → REQUEST_FIELD_INVALID %s', (query, pointer, detail) => {
    const r = refusal(query);
    expect(r.code).toBe('REQUEST_FIELD_INVALID');
    expect(r.errors).toEqual([{ pointer, detail: expect.stringContaining(detail) as string }]);
    expect(r.message).toMatch(/^query parameter \S/);
  });

  it('cuts a long unknown name to 64 characters in the answer', () => {
    const r = refusal(`${'x'.repeat(500)}=1`);
    expect(r.errors![0]!.pointer).toBe(`/${'x'.repeat(64)}`);
    expect(r.message.length).toBeLessThan(200);
  });
});

describe('workflowInspect with freshness inputs', () => {
  /** A package of sequence 10. */
  const sequenceTen = () => {
    const packager = generateKeyPair('authenticated');
    const alice = generateKeyPair('authenticated');
    return createPackage({
      packageId: 'p',
      content: new TextEncoder().encode('{}'),
      packagerSecretKey: packager.secretKey,
      recipients: [alice.publicKey!],
      sequence: 10,
    });
  };
  /** The rollback member of what workflowInspect answers for `pkg` with the query `q`. */
  const rollbackOf = async (pkg: ReturnType<typeof sequenceTen>, q: string) =>
    (JSON.parse((await workflowInspect(pkg, inspectFreshnessOf(q))).body as string) as { rollback: unknown })
      .rollback;

  it('rollback null without; the verdict with; a refusal as its code and message', async () => {
    const pkg = sequenceTen();
    const rollback = (q: string) => rollbackOf(pkg, q);
    expect(await rollback('')).toBeNull();
    expect(await rollback('newest=9')).toEqual({ verdict: 'newer', code: null, message: null });
    expect(await rollback('newest=10')).toEqual({
      verdict: 'same',
      code: null,
      message: null,
      contentCompared: false,
    });
    expect(await rollback('minimumSequence=11')).toMatchObject({
      verdict: 'refused',
      code: 'POLICY_BELOW_MINIMUM',
      message: expect.stringContaining('11') as string,
    });
  });

  it('newest of the same sequence: contentCompared says whether a digest was compared (absent when the sequences differ)', async () => {
    const pkg = sequenceTen();
    const inspected = JSON.parse((await workflowInspect(pkg)).body as string) as {
      content: { sha256: string };
    };
    const other = 'ab'.repeat(32);
    const rollback = (q: string) => rollbackOf(pkg, q);
    // Without a digest the package's own stands in: the sequence is the same, the content was not compared.
    expect(await rollback('newest=10')).toMatchObject({ verdict: 'same', contentCompared: false });
    expect(await rollback(`newest=10:${inspected.content.sha256}`)).toMatchObject({
      verdict: 'same',
      contentCompared: true,
    });
    expect(await rollback(`newest=10:${other}`)).toMatchObject({
      verdict: 'refused',
      code: 'POLICY_SEQUENCE_REUSED',
      contentCompared: true,
    });
    expect(await rollback('newest=9')).not.toHaveProperty('contentCompared');
    expect(await rollback('newest=11')).not.toHaveProperty('contentCompared');
    expect(await rollback('minimumSequence=1')).not.toHaveProperty('contentCompared');
  });
});
