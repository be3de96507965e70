import { inspectPackage, type DeploymentPolicy, type FreshnessOptions } from '@org/oapp-format';
import { INSPECT_QUERY_PARAMETERS } from '@org/packager';
import { Ajv } from 'ajv';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  form,
  packageKeys,
  packageRequest,
  postForm,
  problem,
  sampleWorkflow,
  useServer,
  type Body,
} from './helpers.js';
import { INSPECT_RESPONSE_SCHEMA, OPENAPI_DOCUMENT } from '../src/openapi.js';

// Issue 29: POST /workflow-inspect?minimumSequence=&newest=&now=&clockSkewSeconds= answers the rollback verdict an
// agent would give (SPEC.md §6 step 13a), exactly as `oapp inspect` (oapp-format's inspectPackage with the policy's
// floor and the freshness inputs) gives it. No key is needed; a bad parameter is a 422 naming it.

const srv = useServer();
const workflow = JSON.stringify(sampleWorkflow());
const EXPIRES = '2099-01-31T12:00:00.000Z';
const OTHER_SHA = 'ab'.repeat(32);

/** A format 2 package (sequence 5, expiring in 2099) and a format 1 one, made over HTTP once. */
const made: { v2: Uint8Array; v1: Uint8Array; sha: string } = {
  v2: new Uint8Array(0),
  v1: new Uint8Array(0),
  sha: '',
};

async function packaged(extra: Record<string, unknown>): Promise<Uint8Array> {
  const res = await postForm(
    `${srv.url}/workflow-package`,
    form(packageRequest(packageKeys(), extra), workflow),
  );
  expect(res.status).toBe(200);
  return new Uint8Array(await res.arrayBuffer());
}

beforeAll(async () => {
  made.v2 = await packaged({ sequence: 5, expiresAt: EXPIRES });
  made.v1 = await packaged({ formatVersion: 1 });
  made.sha = (await inspectPackage(made.v2)).content.sha256;
}, 10_000);

const inspect = (query: string, bytes: Uint8Array = made.v2, headers: Record<string, string> = {}) =>
  fetch(`${srv.url}/workflow-inspect${query}`, {
    method: 'POST',
    headers: { 'content-type': 'application/octet-stream', ...headers },
    body: bytes,
  });

async function rollbackOf(query: string, bytes: Uint8Array = made.v2): Promise<Body> {
  const res = await inspect(query, bytes);
  const body = (await res.json()) as Body;
  expect(res.status, JSON.stringify(body)).toBe(200);
  return body.rollback;
}

/** What `oapp inspect` shows: inspectPackage with a policy carrying the floor, and the freshness inputs. */
async function asOappInspect(
  bytes: Uint8Array,
  minimumSequence: number | undefined,
  freshness: FreshnessOptions,
): Promise<unknown> {
  const policy: DeploymentPolicy | undefined =
    minimumSequence === undefined
      ? undefined
      : {
          packageId: 'invoice-uploader',
          packagerIdentities: [],
          requiredSigners: [],
          additionalSigners: [],
          requiredAdditionalSignerCount: 0,
          minimumSequence,
        };
  return (await inspectPackage(bytes, { policy, freshness })).rollback;
}

describe('POST /workflow-inspect: the rollback verdict from the query', () => {
  it('without a parameter `rollback` is null; an empty query is no parameter', async () => {
    expect(await rollbackOf('')).toBeNull();
    expect(await rollbackOf('?')).toBeNull();
  });

  it.each([
    // [query, minimumSequence, newest, now, skew, expected verdict, expected code]
    ['?minimumSequence=5', 5, undefined, undefined, undefined, 'first', null],
    ['?minimumSequence=6', 6, undefined, undefined, undefined, 'refused', 'POLICY_BELOW_MINIMUM'],
    ['?newest=4', undefined, [4], undefined, undefined, 'newer', null],
    ['?newest=5', undefined, [5], undefined, undefined, 'same', null],
    ['?newest=6', undefined, [6], undefined, undefined, 'refused', 'POLICY_ROLLBACK'],
    // Another digest under the package's own sequence, in lower or upper case.
    ...[OTHER_SHA, OTHER_SHA.toUpperCase()].map(
      (sha) =>
        [
          `?newest=5:${sha}`,
          undefined,
          [5, OTHER_SHA],
          undefined,
          undefined,
          'refused',
          'POLICY_SEQUENCE_REUSED',
        ] as const,
    ),
    ['?now=2099-01-31T12:05:00Z', undefined, undefined, '2099-01-31T12:05:00Z', undefined, 'first', null],
    [
      '?now=2099-01-31T12:05:00.001Z',
      undefined,
      undefined,
      '2099-01-31T12:05:00.001Z',
      undefined,
      'refused',
      'POLICY_EXPIRED',
    ],
    [
      '?now=2099-01-31T12:05:00.001Z&clockSkewSeconds=301',
      undefined,
      undefined,
      '2099-01-31T12:05:00.001Z',
      301,
      'first',
      null,
    ],
    ['?clockSkewSeconds=0', undefined, undefined, undefined, 0, 'first', null],
    [
      '?minimumSequence=1&newest=3&now=2030-01-01T00:00:00Z&clockSkewSeconds=86400',
      1,
      [3],
      '2030-01-01T00:00:00Z',
      86400,
      'newer',
      null,
    ],
  ] as const)(
    '%s → %s %s, as oapp inspect gives it',
    async (query, floor, newest, now, skew, verdict, code) => {
      const rollback = await rollbackOf(query);
      expect({ verdict: rollback.verdict, code: rollback.code }).toEqual({ verdict, code });
      const freshness: FreshnessOptions = {
        newest:
          newest === undefined ? undefined : { sequence: newest[0], contentSha256: newest[1] ?? made.sha },
        now: now === undefined ? undefined : new Date(now),
        clockSkewSeconds: skew,
      };
      // Of the package's own sequence (5), `contentCompared` says whether a digest was given to compare.
      const compared = newest?.[0] === 5 ? { contentCompared: newest[1] !== undefined } : {};
      expect(rollback).toEqual({
        ...((await asOappInspect(made.v2, floor, freshness)) as object),
        ...compared,
      });
      if (code !== null) expect(rollback.message).toMatch(/\S/);
    },
  );

  it('newest of the package’s own sequence without a digest: not claimed the same content (contentCompared false)', async () => {
    // An agent that remembered other content under sequence 5 would refuse this package (POLICY_SEQUENCE_REUSED):
    // without the digest the answer says that the content was not compared.
    expect(await rollbackOf('?newest=5')).toEqual({
      verdict: 'same',
      code: null,
      message: null,
      contentCompared: false,
    });
    expect(await rollbackOf(`?newest=5:${made.sha}`)).toEqual({
      verdict: 'same',
      code: null,
      message: null,
      contentCompared: true,
    });
    expect(await rollbackOf(`?newest=5:${OTHER_SHA}`)).toMatchObject({
      code: 'POLICY_SEQUENCE_REUSED',
      contentCompared: true,
    });
    expect(await rollbackOf('?newest=4')).not.toHaveProperty('contentCompared');
  });

  it('a format 1 package: unversioned without floor or newest, refused with either', async () => {
    expect(await rollbackOf('?now=2030-01-01T00:00:00Z', made.v1)).toEqual({
      verdict: 'unversioned',
      code: null,
      message: null,
    });
    expect((await rollbackOf('?minimumSequence=0', made.v1)).code).toBe('POLICY_BELOW_MINIMUM');
    expect((await rollbackOf('?newest=1', made.v1)).code).toBe('POLICY_ROLLBACK');
  });

  it('shows the rest of the inspection unchanged', async () => {
    const plain = (await (await inspect('')).json()) as Body;
    const judged = (await (await inspect('?newest=4')).json()) as Body;
    expect({ ...judged, rollback: null }).toEqual(plain);
    expect(plain).toMatchObject({ formatVersion: 2, sequence: 5, expiresAt: EXPIRES });
  });
});

describe('POST /workflow-inspect: a bad query parameter is a 422 naming it', () => {
  async function expectParamProblem(
    query: string,
    pointers: string[],
    bytes: Uint8Array = made.v2,
    named = pointers[0]!.slice(1),
  ) {
    const res = await inspect(query, bytes);
    const body = await problem(res);
    expect({ status: res.status, code: body.code }).toEqual({ status: 422, code: 'REQUEST_FIELD_INVALID' });
    expect(body.errors.map((e: { pointer: string }) => e.pointer)).toEqual(pointers);
    expect(body.detail).toContain(`query parameter ${named} `);
    return body;
  }

  it.each([
    ['?minimumSequence=', '/minimumSequence'],
    ['?minimumSequence', '/minimumSequence'],
    ['?minimumSequence=-1', '/minimumSequence'],
    ['?minimumSequence=1.5', '/minimumSequence'],
    ['?minimumSequence=1e3', '/minimumSequence'],
    ['?minimumSequence=+1', '/minimumSequence'],
    ['?minimumSequence=%201', '/minimumSequence'],
    ['?minimumSequence=9007199254740992', '/minimumSequence'],
    ['?minimumSequence=0x10', '/minimumSequence'],
    ['?newest=', '/newest'],
    ['?newest=abc', '/newest'],
    ['?newest=5:', '/newest'],
    ['?newest=5:abcd', '/newest'],
    [`?newest=5:${OTHER_SHA}0`, '/newest'],
    [`?newest=:${OTHER_SHA}`, '/newest'],
    ['?newest=9007199254740992', '/newest'],
    ['?now=', '/now'],
    ['?now=tomorrow', '/now'],
    ['?now=2027-02-30T00:00:00Z', '/now'],
    ['?now=2027-01-31T12:00:00%2B01:00', '/now'],
    ['?now=2027-01-31T12:00:00.1Z', '/now'],
    ['?now=2027-01-31 12:00:00Z', '/now'],
    ['?clockSkewSeconds=', '/clockSkewSeconds'],
    ['?clockSkewSeconds=86401', '/clockSkewSeconds'],
    ['?clockSkewSeconds=-1', '/clockSkewSeconds'],
    ['?clockSkewSeconds=300s', '/clockSkewSeconds'],
  ])('%s → 422 REQUEST_FIELD_INVALID naming %s', async (query, pointer) => {
    await expectParamProblem(query, [pointer]);
  });

  it('a repeated parameter is refused (it must appear once)', async () => {
    const body = await expectParamProblem('?newest=4&newest=6', ['/newest']);
    expect(body.detail).toBe('query parameter newest must appear once');
  });

  it('an unknown parameter is refused, so a misspelt floor is never silently dropped', async () => {
    const body = await expectParamProblem('?minimumSequnce=9', ['/minimumSequnce']);
    expect(body.detail).toMatch(/^query parameter minimumSequnce is not a known parameter/);
    await expectParamProblem('?__proto__=1&toString=2', ['/__proto__', '/toString']);
    // The pointer escapes `/` and `~` (RFC 6901); the detail shows the name as given.
    await expectParamProblem('?a%2Fb~c=1', ['/a~1b~0c'], made.v2, 'a/b~c');
    // A control character of a name is not echoed.
    const body2 = await expectParamProblem('?a%0Ab=1', ['/a?b']);
    expect(body2.detail).not.toContain('\n');
  });

  it('names every failing parameter, the first in the detail', async () => {
    await expectParamProblem('?now=x&minimumSequence=5&newest=y&extra=1', ['/now', '/newest', '/extra']);
  });

  it('judges the query before the upload: bytes that are not a package still get the 422', async () => {
    await expectParamProblem('?newest=x', ['/newest'], new TextEncoder().encode('not a package'));
    // With a good query those bytes are the format's refusal.
    const res = await inspect('?newest=1', new TextEncoder().encode('not a package'));
    expect({ status: res.status, code: (await problem(res)).code }).toEqual({
      status: 400,
      code: 'FORMAT_BAD_MAGIC',
    });
  });

  it('Accept is judged first (406), then the query', async () => {
    const res = await inspect('?newest=x', made.v2, { accept: 'application/octet-stream' });
    expect({ status: res.status, code: (await problem(res)).code }).toEqual({
      status: 406,
      code: 'REQUEST_NOT_ACCEPTABLE',
    });
  });
});

describe('the OpenAPI document declares the query of /workflow-inspect', () => {
  const declared = OPENAPI_DOCUMENT.paths['/workflow-inspect'].post.parameters;

  it('every parameter the packager takes, in the query, optional', () => {
    expect(declared.map((p) => p.name)).toEqual([...INSPECT_QUERY_PARAMETERS]);
    for (const p of declared)
      expect({ in: p.in, required: p.required }).toEqual({ in: 'query', required: false });
  });

  it('the string patterns take the values the packager takes', () => {
    const ajv = new Ajv({ strict: false });
    const schemaOf = (name: string) => declared.find((p) => p.name === name)!.schema;
    for (const [name, value, ok] of [
      ['newest', '5', true],
      ['newest', `5:${OTHER_SHA.toUpperCase()}`, true],
      ['newest', '5:', false],
      ['now', '2027-01-31T12:00:00Z', true],
      ['now', '2027-01-31T12:00:00.123Z', true],
      ['now', '2027-01-31T12:00:00+01:00', false],
    ] as const)
      expect(ajv.validate(schemaOf(name), value), `${name}=${value}`).toBe(ok);
  });

  it('the answers, a verdict, a refusal and none, match the response schema', async () => {
    const ajv = new Ajv({ strict: false });
    for (const query of ['', '?newest=4', '?minimumSequence=6']) {
      const body = (await (await inspect(query)).json()) as Body;
      expect(ajv.validate(INSPECT_RESPONSE_SCHEMA, body), `${query} ${JSON.stringify(ajv.errors)}`).toBe(
        true,
      );
    }
  });
});
