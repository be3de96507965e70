// One table of requests, sent with the same X-Request-Id to the Express service and to the agent hosting the built
// packager.oapp: every deterministic answer (compile, hash, inspect, build-workflows, health, every refusal) must be
// the same status, the same headers of the answer and the same bytes. The refusals are those the Express service's
// own tests exercise (apps/packager-api/test/*.test.ts). Answers that differ by design (fresh keys, nonces) are in
// cross-open.ts; the agent's own routing (paths no step serves) is at the end, with what differs.
import { inspectPackage } from '@org/oapp-format';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  answers,
  codeOf,
  form,
  json,
  multipart,
  octets,
  sampleWorkflow,
  START_MS,
  type Req,
  type Seen,
} from './harness.js';
import { f } from './front-ends.js';
import {
  BOOTSTRAP,
  encryptKeys,
  envelopeBody,
  newKey,
  packageKeys,
  packageRequest,
  spec,
  type PackageKeys,
} from './fixtures.js';

/**
 * A package made once by the Express service (its bytes are the input of the inspect and envelope cases), with its
 * release sequence (the creation time in seconds) and content sha256.
 */
const made = { k: undefined as unknown as PackageKeys, bytes: new Uint8Array(0), sequence: 0, sha256: '' };
beforeAll(async () => {
  made.k = packageKeys();
  const res = await fetch(`${f.express}/workflow-package`, {
    method: 'POST',
    body: form(packageRequest(made.k), JSON.stringify(sampleWorkflow())),
  });
  expect(res.status).toBe(200);
  made.bytes = new Uint8Array(await res.arrayBuffer());
  const shown = await inspectPackage(made.bytes);
  made.sequence = shown.sequence!;
  made.sha256 = shown.content.sha256;
}, START_MS);

const MiB = 1024 * 1024;
const workflow = JSON.stringify(sampleWorkflow());
const k = packageKeys();
const e = encryptKeys();
const reviewPub = newKey('review-pub', 'sign');

/** A PackageRequest with one key changed. */
function withKey(index: number, change: (hex: string) => string) {
  const req = packageRequest(k);
  req.keys[index] = { ...req.keys[index]!, keyHex: change(req.keys[index]!.keyHex) };
  return req;
}

/** A workflow whose processor uses `resource`. */
const usesResource = (resource: string) => JSON.stringify(sampleWorkflow('hello', resource));

/** A form whose parts are given one by one (name, value, filename for a file part). */
function parts(...list: [string, string | Blob, string?][]): FormData {
  const fd = new FormData();
  for (const [name, value, filename] of list) {
    if (filename === undefined) fd.append(name, value);
    else fd.append(name, value, filename);
  }
  return fd;
}

/** A hand-made multipart body (boundary `b`) with a `body` part of these bytes and a `stream` part. */
function rawForm(body: Uint8Array, stream: string): Req {
  const bytes = Buffer.concat([
    Buffer.from('--b\r\nContent-Disposition: form-data; name="body"\r\n\r\n'),
    body,
    Buffer.from('\r\n--b\r\nContent-Disposition: form-data; name="stream"; filename="w"\r\n'),
    Buffer.from(`Content-Type: application/octet-stream\r\n\r\n${stream}\r\n--b--\r\n`),
  ]);
  return {
    path: '/workflow-package',
    init: { method: 'POST', body: bytes, headers: { 'content-type': 'multipart/form-data; boundary=b' } },
  };
}

const envelope = (body: unknown, bytes: () => Uint8Array = () => made.bytes): Req =>
  multipart('/package-envelope', () => form(body, bytes()));

/** [what, request id, request, the Express service's status, its problem code (null: not a problem)] */
type Case = [string, string, () => Req, number, string | null];

const GOOD: Case[] = [
  ['GET /health', 'c-health', () => ({ path: '/health' }), 200, null],
  ['HEAD /health', 'c-health-head', () => ({ path: '/health', init: { method: 'HEAD' } }), 200, null],
  ['/workflow-hash of JSON', 'c-hash', () => json('/workflow-hash', workflow), 200, null],
  [
    '/workflow-hash of a form stream part',
    'c-hash-form',
    () => multipart('/workflow-hash', () => parts(['stream', new Blob([workflow]), 'w.json'])),
    200,
    null,
  ],
  ['/workflow-compile of JSON', 'c-compile', () => json('/workflow-compile', workflow), 200, null],
  [
    '/workflow-compile of a form stream part, Accept */*',
    'c-compile-form',
    () =>
      multipart('/workflow-compile', () => parts(['stream', new Blob([workflow]), 'w.json']), {
        accept: '*/*',
      }),
    200,
    null,
  ],
  [
    '/build-workflows of a manifest (a source workflow of the resource directory)',
    'c-build',
    () =>
      json(
        '/build-workflows',
        JSON.stringify({
          includes: [
            {
              sourceWorkflow: 'health.workflow.json',
              customizations: [{ op: 'value', sourcePath: '$.workflows[0].name', sourceValue: 'renamed' }],
            },
          ],
        }),
      ),
    200,
    null,
  ],
  ['/workflow-inspect of a package', 'c-inspect', () => octets('/workflow-inspect', made.bytes), 200, null],
  ['GET /health with a query', 'c-health-query', () => ({ path: '/health?x=1' }), 200, null],
];

const NEGOTIATION: Case[] = [
  [
    '/string-encrypt, Accept: application/json',
    'c-406-string',
    () => multipart('/string-encrypt', () => form(e.body(['alice']), 'x'), { accept: 'application/json' }),
    406,
    'REQUEST_NOT_ACCEPTABLE',
  ],
  [
    '/bootstrap-encrypt, Accept: application/json',
    'c-406-bootstrap',
    () =>
      multipart('/bootstrap-encrypt', () => form(e.body(['alice']), BOOTSTRAP), {
        accept: 'application/json',
      }),
    406,
    'REQUEST_NOT_ACCEPTABLE',
  ],
  [
    '/workflow-package, Accept: application/json',
    'c-406-package',
    () =>
      multipart('/workflow-package', () => form(packageRequest(k), workflow), { accept: 'application/json' }),
    406,
    'REQUEST_NOT_ACCEPTABLE',
  ],
  [
    '/workflow-inspect, Accept: application/octet-stream',
    'c-406-inspect',
    () => octets('/workflow-inspect', made.bytes, { accept: 'application/octet-stream' }),
    406,
    'REQUEST_NOT_ACCEPTABLE',
  ],
  [
    '/workflow-compile, Accept: text/html',
    'c-406-compile',
    () => json('/workflow-compile', workflow, { accept: 'text/html' }),
    406,
    'REQUEST_NOT_ACCEPTABLE',
  ],
  [
    '/key-gen, Accept: text/plain',
    'c-406-keygen',
    () => ({ path: '/key-gen?purpose=sign', init: { headers: { accept: 'text/plain' } } }),
    406,
    'REQUEST_NOT_ACCEPTABLE',
  ],
  [
    '/workflow-package, JSON instead of a form (Accept-Post)',
    'c-415-package',
    () => json('/workflow-package', JSON.stringify(packageRequest(k))),
    415,
    'REQUEST_UNSUPPORTED_MEDIA_TYPE',
  ],
  [
    '/workflow-inspect, JSON (Accept-Post)',
    'c-415-inspect',
    () => json('/workflow-inspect', '{}'),
    415,
    'REQUEST_UNSUPPORTED_MEDIA_TYPE',
  ],
  [
    '/workflow-compile, text/plain',
    'c-415-compile',
    () => ({
      path: '/workflow-compile',
      init: { method: 'POST', body: '{}', headers: { 'content-type': 'text/plain' } },
    }),
    415,
    'REQUEST_UNSUPPORTED_MEDIA_TYPE',
  ],
  [
    '/workflow-package, Content-Encoding: gzip',
    'c-415-gzip',
    () => ({
      path: '/workflow-package',
      init: {
        method: 'POST',
        body: 'x',
        headers: { 'content-type': 'multipart/form-data; boundary=b', 'content-encoding': 'gzip' },
      },
    }),
    415,
    'UPLOAD_CONTENT_ENCODING',
  ],
  [
    'a 406 is judged before the media type (JSON with Accept: image/png)',
    'c-406-first',
    () => json('/workflow-package', '{}', { accept: 'image/png' }),
    406,
    'REQUEST_NOT_ACCEPTABLE',
  ],
];

const BODY_PART: Case[] = [
  [
    'a body part that is not JSON',
    'c-body-json',
    () => multipart('/workflow-package', () => form('{"packageId":', workflow, true)),
    400,
    'REQUEST_BODY_NOT_JSON',
  ],
  [
    'duplicate names in the body part (S65)',
    'c-body-dup',
    () => multipart('/workflow-package', () => form('{"packageId":"a","packageId":"b"}', workflow, true)),
    400,
    'REQUEST_BODY_DUPLICATE_KEY',
  ],
  [
    'deep nesting in the body part (S3)',
    'c-body-deep',
    () => multipart('/workflow-package', () => form('['.repeat(20_000) + ']'.repeat(20_000), workflow, true)),
    400,
    'REQUEST_BODY_TOO_DEEP',
  ],
  [
    '__proto__ in the body part (S4)',
    'c-body-proto',
    () =>
      multipart('/workflow-package', () =>
        form(
          JSON.stringify(packageRequest(k)).replace('{', '{"__proto__":{"polluted":true},'),
          workflow,
          true,
        ),
      ),
    422,
    'REQUEST_FIELD_INVALID',
  ],
  [
    'a lone surrogate in packageId (S66)',
    'c-body-surrogate',
    () =>
      multipart('/workflow-package', () =>
        form(JSON.stringify(packageRequest(k)).replace('"invoice-uploader"', '"\\ud800"'), workflow, true),
      ),
    400,
    'REQUEST_BODY_NOT_JSON',
  ],
  [
    'invalid UTF-8 in the body part (S67)',
    'c-body-utf8',
    () => rawForm(Buffer.from([0x7b, 0x22, 0xc3, 0x28, 0x22, 0x7d]), workflow),
    400,
    'UPLOAD_BODY_NOT_UTF8',
  ],
  [
    'a misspelt field (encryptionKey)',
    'c-field-name',
    () => {
      const req: Record<string, unknown> = packageRequest(k);
      req['encryptionKey'] = req['encryptionKeys'];
      delete req['encryptionKeys'];
      return multipart('/workflow-package', () => form(req, workflow));
    },
    422,
    'REQUEST_FIELD_INVALID',
  ],
  [
    'no packageId',
    'c-field-missing',
    () => {
      const req: Record<string, unknown> = packageRequest(k);
      delete req['packageId'];
      return multipart('/workflow-package', () => form(req, workflow));
    },
    422,
    'REQUEST_FIELD_INVALID',
  ],
  [
    'packageId sent to /string-encrypt',
    'c-field-foreign',
    () => multipart('/string-encrypt', () => form(e.body(['alice'], { packageId: 'p' }), 'x')),
    422,
    'REQUEST_FIELD_INVALID',
  ],
];

/** The release members (issue 29): judged the same by both, before the keys. */
const RELEASE: Case[] = [
  ...(
    [
      ['a negative sequence', 'c-rel-negative', { sequence: -1 }],
      ['a fractional sequence', 'c-rel-fraction', { sequence: 1.5 }],
      ['an expiresAt that is not a UTC time', 'c-rel-time', { expiresAt: '2099-01-01T00:00:00+01:00' }],
      ['an expiresAt no calendar has', 'c-rel-calendar', { expiresAt: '2027-02-30T00:00:00.000Z' }],
      ['an expiresAt in the past', 'c-rel-past', { expiresAt: '2020-01-01T00:00:00.000Z' }],
      ['formatVersion 3', 'c-rel-version', { formatVersion: 3 }],
      ['formatVersion 1 with a sequence', 'c-rel-v1-sequence', { formatVersion: 1, sequence: 2 }],
    ] as const
  ).map(([what, id, extra]): Case => [
    `/workflow-package, ${what}`,
    id,
    () => multipart('/workflow-package', () => form(packageRequest(k, extra), workflow)),
    422,
    'REQUEST_FIELD_INVALID',
  ]),
  // An integer member spelt with a fraction or an exponent: the number alone is an integer (1000, 7, 2^53 − 1),
  // the spelling is refused by name, never rounded and signed.
  ...(
    [
      ['sequence 1e3', 'c-rel-exponent', 'sequence', '1e3'],
      ['sequence 7.0000000000000001', 'c-rel-rounds', 'sequence', '7.0000000000000001'],
      ['sequence 9007199254740990.9', 'c-rel-rounds-max', 'sequence', '9007199254740990.9'],
      ['formatVersion 2.0', 'c-rel-version-fraction', 'formatVersion', '2.0'],
    ] as const
  ).map(([what, id, member, spelling]): Case => [
    `/workflow-package, ${what}`,
    id,
    () =>
      multipart('/workflow-package', () =>
        form(JSON.stringify(packageRequest(k, { [member]: '@' })).replace('"@"', spelling), workflow, true),
      ),
    422,
    'REQUEST_FIELD_INVALID',
  ]),
  [
    '/workflow-package, a sequence above 2^53 - 1 (not an exact JSON number)',
    'c-rel-huge',
    () => multipart('/workflow-package', () => form(packageRequest(k, { sequence: 2 ** 53 }), workflow)),
    400,
    'REQUEST_BODY_NOT_JSON',
  ],
  [
    '/bootstrap-encrypt, formatVersion 1 with signers',
    'c-rel-v1-signers',
    () =>
      multipart('/bootstrap-encrypt', () =>
        form(
          e.body(['alice'], { formatVersion: 1, signers: [{ key: 'packager', signText: 'x' }] }),
          BOOTSTRAP,
        ),
      ),
    422,
    'REQUEST_FIELD_INVALID',
  ],
  [
    '/bootstrap-encrypt, a signer key id not in keys',
    'c-rel-signer-unknown',
    () =>
      multipart('/bootstrap-encrypt', () =>
        form(e.body(['alice'], { signers: [{ key: 'nobody', signText: 'x' }] }), BOOTSTRAP),
      ),
    422,
    'REQUEST_UNKNOWN_KEY_ID',
  ],
  [
    '/bootstrap-encrypt, an authenticated key as signer',
    'c-rel-signer-purpose',
    () =>
      multipart('/bootstrap-encrypt', () =>
        form(e.body(['alice'], { signers: [{ key: 'packager', signText: 'x' }] }), BOOTSTRAP),
      ),
    400,
    'CRYPTO_WRONG_KEY_PURPOSE',
  ],
];

/** The largest release sequence, 2^53 − 1. */
const MAX_SEQ = Number.MAX_SAFE_INTEGER;
const OTHER_SHA = 'ab'.repeat(32);
const inspectWith =
  (query: () => string, bytes: () => Uint8Array = () => made.bytes) =>
  () =>
    octets(`/workflow-inspect?${query()}`, bytes());

/**
 * /workflow-inspect's query (issue 29): the rollback verdict an agent would give, and every malformed, repeated or
 * unknown parameter refused alike (before the package is read). `made` has no expiry, so no answer reads a clock.
 * [what, id, query, the verdict the answer shows (null: a refusal of the request)]
 */
const INSPECT_VERDICTS: [string, string, () => string, string | null, string | null][] = [
  ['newest below the sequence', 'c-iq-newer', () => 'newest=1', 'newer', null],
  // Without a digest the package's own stands in: the answer says the content was not compared.
  ['newest = the sequence, no digest', 'c-iq-same', () => `newest=${made.sequence}`, 'same', null],
  [
    'newest = the sequence with its digest',
    'c-iq-same-sha',
    () => `newest=${made.sequence}:${made.sha256.toUpperCase()}`,
    'same',
    null,
  ],
  [
    'newest = the sequence with another digest',
    'c-iq-reused',
    () => `newest=${made.sequence}:${OTHER_SHA}`,
    'refused',
    'POLICY_SEQUENCE_REUSED',
  ],
  ['newest above the sequence', 'c-iq-rollback', () => `newest=${MAX_SEQ}`, 'refused', 'POLICY_ROLLBACK'],
  ['minimumSequence = the sequence', 'c-iq-floor', () => `minimumSequence=${made.sequence}`, 'first', null],
  [
    'minimumSequence above the sequence',
    'c-iq-below',
    () => `minimumSequence=${MAX_SEQ}`,
    'refused',
    'POLICY_BELOW_MINIMUM',
  ],
  [
    'every parameter',
    'c-iq-all',
    () => `minimumSequence=0&newest=0&now=2099-01-31T12:00:00Z&clockSkewSeconds=0`,
    'newer',
    null,
  ],
];

const INSPECT_QUERY: Case[] = [
  ...INSPECT_VERDICTS.map(([what, id, query]): Case => [
    `/workflow-inspect?${what}`,
    id,
    inspectWith(query),
    200,
    null,
  ]),
  ...(
    [
      ['minimumSequence=-1', 'c-iq-bad-floor'],
      ['minimumSequence=9007199254740992', 'c-iq-big-floor'],
      ['newest=5:abcd', 'c-iq-bad-newest'],
      ['now=2027-02-30T00:00:00Z', 'c-iq-bad-now'],
      ['now=2027-01-31T12:00:00%2B01:00', 'c-iq-offset-now'],
      ['clockSkewSeconds=86401', 'c-iq-bad-skew'],
      ['newest=1&newest=2', 'c-iq-twice'],
      ['minimumSequnce=1', 'c-iq-unknown'],
      ['__proto__=1', 'c-iq-proto'],
    ] as const
  ).map(([query, id]): Case => [
    `/workflow-inspect?${query}`,
    id,
    inspectWith(() => query),
    422,
    'REQUEST_FIELD_INVALID',
  ]),
  [
    '/workflow-inspect?newest=x of bytes that are not a package (the query first)',
    'c-iq-before-upload',
    inspectWith(
      () => 'newest=x',
      () => new TextEncoder().encode('not a package'),
    ),
    422,
    'REQUEST_FIELD_INVALID',
  ],
];

const KEYS: Case[] = [
  [
    'two keys with one id',
    'c-key-dup',
    () => {
      const req = packageRequest(k);
      req.keys.push(spec(newKey('alice', 'authenticated'), 'public'));
      return multipart('/workflow-package', () => form(req, workflow));
    },
    422,
    'REQUEST_DUPLICATE_KEY_ID',
  ],
  [
    'an unknown key id',
    'c-key-unknown',
    () =>
      multipart('/workflow-package', () =>
        form(packageRequest(k, { encryptionKeys: ['alice', 'carol'] }), workflow),
      ),
    422,
    'REQUEST_UNKNOWN_KEY_ID',
  ],
  [
    'keyHex of odd length (S63)',
    'c-key-odd',
    () =>
      multipart('/workflow-package', () =>
        form(
          withKey(1, (h) => h.slice(0, 63)),
          workflow,
        ),
      ),
    400,
    'CRYPTO_BAD_HEX',
  ],
  [
    'keyHex with a non-hex character (S64)',
    'c-key-nonhex',
    () =>
      multipart('/workflow-package', () =>
        form(
          withKey(1, (h) => h.slice(0, 62) + 'fg'),
          workflow,
        ),
      ),
    400,
    'CRYPTO_BAD_HEX',
  ],
  [
    'keyHex of 62 characters (S113)',
    'c-key-short',
    () =>
      multipart('/workflow-package', () =>
        form(
          withKey(1, (h) => h.slice(0, 62)),
          workflow,
        ),
      ),
    400,
    'CRYPTO_BAD_KEY_LENGTH',
  ],
  [
    'an all-zero recipient key (S115)',
    'c-key-weak',
    () =>
      multipart('/workflow-package', () =>
        form(
          withKey(1, () => '0'.repeat(64)),
          workflow,
        ),
      ),
    400,
    'CRYPTO_WEAK_KEY',
  ],
  [
    "a sign secret with another key's public half (S95)",
    'c-key-mismatch',
    () =>
      multipart('/workflow-package', () =>
        form(
          withKey(3, () => k.author.secretHex.slice(0, 64) + k.ops.publicHex!),
          workflow,
        ),
      ),
    400,
    'CRYPTO_KEY_MISMATCH',
  ],
  [
    'a sign key as recipient (S116)',
    'c-key-purpose',
    () =>
      multipart('/workflow-package', () =>
        form(packageRequest(k, { encryptionKeys: ['alice', 'author'] }), workflow),
      ),
    400,
    'CRYPTO_WRONG_KEY_PURPOSE',
  ],
  [
    'a public key as packager identity (S116)',
    'c-key-type',
    () =>
      multipart('/workflow-package', () =>
        form(packageRequest(k, { packagerIdentityPrivateKey: 'alice' }), workflow),
      ),
    400,
    'CRYPTO_WRONG_KEY_TYPE',
  ],
  [
    'a secret key as /bootstrap-encrypt recipient (S116)',
    'c-key-recipient-secret',
    () => multipart('/bootstrap-encrypt', () => form(e.body(['packager']), BOOTSTRAP)),
    400,
    'CRYPTO_WRONG_KEY_TYPE',
  ],
  [
    'two recipients for /string-encrypt',
    'c-one-recipient',
    () => multipart('/string-encrypt', () => form(e.body(['alice', 'bob']), 'x')),
    422,
    'REQUEST_ONE_RECIPIENT_REQUIRED',
  ],
  [
    'no recipient for /string-encrypt',
    'c-no-recipient',
    () => multipart('/string-encrypt', () => form(e.body([]), 'x')),
    422,
    'REQUEST_ONE_RECIPIENT_REQUIRED',
  ],
  [
    'no recipient for /bootstrap-encrypt',
    'c-no-recipients',
    () => multipart('/bootstrap-encrypt', () => form(e.body([]), BOOTSTRAP)),
    422,
    'REQUEST_FIELD_INVALID',
  ],
];

const PARTS: Case[] = [
  [
    'no stream part (S18)',
    'c-part-missing',
    () => multipart('/workflow-package', () => parts(['body', JSON.stringify(packageRequest(k))])),
    400,
    'UPLOAD_MISSING_PART',
  ],
  [
    'the stream part as a text field (S15)',
    'c-part-stream-text',
    () =>
      multipart('/string-encrypt', () =>
        parts(['body', JSON.stringify(e.body(['alice']))], ['stream', 'plain text field']),
      ),
    400,
    'UPLOAD_STREAM_MUST_BE_FILE',
  ],
  [
    'the body part as a file (S16)',
    'c-part-body-file',
    () =>
      multipart('/workflow-package', () =>
        parts(
          ['body', new Blob([JSON.stringify(packageRequest(k))]), 'body.json'],
          ['stream', new Blob([workflow]), 'w.json'],
        ),
      ),
    400,
    'UPLOAD_BODY_MUST_BE_FIELD',
  ],
  [
    'a third part (S160)',
    'c-part-third',
    () =>
      multipart('/workflow-package', () => {
        const fd = form(packageRequest(k), workflow);
        fd.append('extra', 'x');
        return fd;
      }),
    400,
    'UPLOAD_UNKNOWN_PART',
  ],
  [
    'an extra first part',
    'c-part-first',
    () =>
      multipart('/workflow-package', () => {
        const fd = parts(['extra', 'x']);
        for (const [name, value] of form(packageRequest(k), workflow)) fd.append(name, value);
        return fd;
      }),
    400,
    'UPLOAD_UNKNOWN_PART',
  ],
  [
    'a wrongly named part',
    'c-part-name',
    () =>
      multipart('/workflow-package', () =>
        parts(['meta', JSON.stringify(packageRequest(k))], ['stream', new Blob([workflow]), 'w.json']),
      ),
    400,
    'UPLOAD_UNKNOWN_PART',
  ],
  [
    'a truncated multipart body',
    'c-part-truncated',
    () => ({
      path: '/workflow-package',
      init: {
        method: 'POST',
        headers: { 'content-type': 'multipart/form-data; boundary=XbOuNdArY' },
        body:
          `--XbOuNdArY\r\nContent-Disposition: form-data; name="body"\r\n\r\n${JSON.stringify(packageRequest(k))}` +
          `\r\n--XbOuNdArY\r\nContent-Disposition: form-data; name="stream"; filename="w.json"\r\n` +
          `Content-Type: application/octet-stream\r\n\r\n{"workflows":`,
      },
    }),
    400,
    'UPLOAD_MALFORMED',
  ],
  [
    'a body part sent to /workflow-hash',
    'c-part-hash-body',
    () =>
      multipart('/workflow-hash', () => parts(['body', '{}'], ['stream', new Blob([workflow]), 'w.json'])),
    422,
    'REQUEST_FIELD_INVALID',
  ],
];

const SIZES: Case[] = [
  [
    'a body part over the field cap, 100 KiB (S17)',
    'c-size-field',
    () =>
      multipart('/workflow-package', () =>
        form(packageRequest(k, { signers: [{ key: 'author', signText: 'x'.repeat(100 * 1024) }] }), workflow),
      ),
    413,
    'UPLOAD_FIELD_TOO_LARGE',
  ],
  [
    'a body part of 100 KiB to /string-encrypt (over the field cap before the 64 KiB upload cap)',
    'c-size-string-body',
    () => multipart('/string-encrypt', () => form(e.body(['alice'], { pad: 'x'.repeat(100 * 1024) }), 'x')),
    413,
    'UPLOAD_FIELD_TOO_LARGE',
  ],
  [
    'a /string-encrypt upload of 300 KiB, streamed (the 64 KiB cap from its declared length)',
    'c-size-string-declared',
    () => multipart('/string-encrypt', () => form(e.body(['alice']), new Uint8Array(300 * 1024))),
    413,
    'UPLOAD_REQUEST_TOO_LARGE',
  ],
  [
    'a /string-encrypt stream part of 64 KiB + 1',
    'c-size-string',
    () => multipart('/string-encrypt', () => form(e.body(['alice']), new Uint8Array(64 * 1024 + 1))),
    413,
    'UPLOAD_FILE_TOO_LARGE',
  ],
  [
    'a /bootstrap-encrypt stream part of 4 MiB + 1',
    'c-size-bootstrap',
    () => multipart('/bootstrap-encrypt', () => form(e.body(['alice']), new Uint8Array(4 * MiB + 1))),
    413,
    'UPLOAD_FILE_TOO_LARGE',
  ],
  [
    'a /workflow-package stream part of 8 MiB + 1',
    'c-size-workflow',
    () =>
      multipart('/workflow-package', () => form(packageRequest(k), new Uint8Array(8 * MiB + 1).fill(0x20))),
    413,
    'UPLOAD_FILE_TOO_LARGE',
  ],
  [
    'a /workflow-compile JSON body of 8 MiB + 1',
    'c-size-json',
    () => json('/workflow-compile', JSON.stringify({ ...sampleWorkflow(), comment: 'x'.repeat(8 * MiB) })),
    413,
    'UPLOAD_BODY_TOO_LARGE',
  ],
  [
    'a /workflow-inspect body of 32 MiB + 1',
    'c-size-inspect',
    () => octets('/workflow-inspect', new Uint8Array(32 * MiB + 1)),
    413,
    'UPLOAD_BODY_TOO_LARGE',
  ],
  [
    'a /package-envelope stream part of 32 MiB + 1',
    'c-size-envelope',
    () => envelope(envelopeBody(made.k).body, () => new Uint8Array(32 * MiB + 1)),
    413,
    'UPLOAD_FILE_TOO_LARGE',
  ],
];

const WORKFLOWS: Case[] = [
  [
    'a workflow that is not JSON',
    'c-wf-json',
    () => json('/workflow-compile', '{"workflows":'),
    400,
    'WORKFLOW_JSON_INVALID',
  ],
  [
    'a workflow failing the schema (pointers)',
    'c-wf-schema',
    () => json('/workflow-compile', '{"workflow":[]}'),
    422,
    'WORKFLOW_SCHEMA_INVALID',
  ],
  [
    'duplicate names in a workflow',
    'c-wf-dup',
    () => json('/workflow-hash', '{"workflows":[],"workflows":[]}'),
    400,
    'WORKFLOW_JSON_DUPLICATE_KEY',
  ],
  [
    '/workflow-package of an empty workflow list',
    'c-wf-package-schema',
    () => multipart('/workflow-package', () => form(packageRequest(k), '{"workflows":[]}')),
    422,
    'WORKFLOW_SCHEMA_INVALID',
  ],
  [
    '/workflow-package of a missing resource',
    'c-wf-missing',
    () => multipart('/workflow-package', () => form(packageRequest(k), usesResource('/general/none.js'))),
    422,
    'WORKFLOW_RESOURCE_NOT_FOUND',
  ],
  [
    '/workflow-hash of a missing resource (a UUID request id)',
    '0b0e2b4c-3f3a-4c49-9a53-3d7b0f6a2b11',
    () => json('/workflow-hash', usesResource('/nope.js')),
    422,
    'WORKFLOW_RESOURCE_NOT_FOUND',
  ],
  [
    '/bootstrap-encrypt of an invalid bootstrap',
    'c-wf-bootstrap',
    () => multipart('/bootstrap-encrypt', () => form(e.body(['alice']), '[{"deploymentId":"d1"}]')),
    422,
    'WORKFLOW_BOOTSTRAP_INVALID',
  ],
  [
    '/bootstrap-encrypt of a bootstrap that is not JSON',
    'c-wf-bootstrap-json',
    () => multipart('/bootstrap-encrypt', () => form(e.body(['alice']), '[{"deploymentId":')),
    400,
    'WORKFLOW_JSON_INVALID',
  ],
  [
    '/build-workflows: a customization path that does not exist',
    'c-wf-manifest-path',
    () =>
      json(
        '/build-workflows',
        JSON.stringify({
          includes: [
            {
              sourceWorkflow: 'health.workflow.json',
              customizations: [{ op: 'delete', sourcePath: '$.workflows[7]' }],
            },
          ],
        }),
      ),
    422,
    'WORKFLOW_MANIFEST_PATH_NOT_FOUND',
  ],
  [
    '/build-workflows: a misspelt manifest field',
    'c-wf-manifest',
    () => json('/build-workflows', '{"include":[]}'),
    422,
    'WORKFLOW_MANIFEST_INVALID',
  ],
];

const PACKAGES: Case[] = [
  [
    '/workflow-inspect of bytes that are not a package',
    'c-pkg-magic',
    () => octets('/workflow-inspect', new TextEncoder().encode('hello world, not a package')),
    400,
    'FORMAT_BAD_MAGIC',
  ],
  [
    '/workflow-inspect of a truncated package',
    'c-pkg-truncated',
    () => octets('/workflow-inspect', made.bytes.subarray(0, 40)),
    400,
    'FORMAT_TRUNCATED',
  ],
  [
    '/package-envelope of bytes that are not a package',
    'c-env-magic',
    () => envelope(envelopeBody(made.k).body, () => new TextEncoder().encode('not a package')),
    400,
    'FORMAT_BAD_MAGIC',
  ],
  [
    '/package-envelope by someone who is not a recipient',
    'c-env-recipient',
    () => {
      const b = envelopeBody(made.k).body;
      b.keys[0] = spec(newKey('stranger', 'authenticated'), 'secret', 'me');
      return envelope(b);
    },
    422,
    'CRYPTO_NO_MATCHING_RECIPIENT',
  ],
  [
    '/package-envelope of a package from an untrusted packager',
    'c-env-packager',
    () => {
      const b = envelopeBody(made.k).body;
      b.keys[1] = spec(newKey('x', 'authenticated'), 'public', 'vendor');
      return envelope(b);
    },
    403,
    'POLICY_PACKAGER_NOT_TRUSTED',
  ],
  [
    '/package-envelope under a policy pinning another package id',
    'c-env-id',
    () =>
      envelope(
        envelopeBody(made.k, {
          packaging: {
            packageId: 'other-app',
            packagerIdentities: ['vendor'],
            requiredSigners: [{ id: 'vendor-author' }],
          },
        }).body,
      ),
    403,
    'POLICY_PACKAGE_ID_MISMATCH',
  ],
  [
    '/package-envelope under a policy requiring a signer who did not sign',
    'c-env-signer',
    () => {
      // One key for both front-ends: the detail names its fingerprint.
      const b = envelopeBody(made.k, {
        packaging: {
          packageId: 'invoice-uploader',
          packagerIdentities: ['vendor'],
          requiredSigners: [{ id: 'vendor-author' }, { id: 'review-pub' }],
        },
      }).body;
      b.keys.push(spec(reviewPub, 'public'));
      return envelope(b);
    },
    403,
    'POLICY_REQUIRED_SIGNER_MISSING',
  ],
  [
    '/package-envelope naming an unknown policy key id',
    'c-env-key',
    () =>
      envelope(
        envelopeBody(made.k, { packaging: { packageId: 'invoice-uploader', packagerIdentities: ['nobody'] } })
          .body,
      ),
    422,
    'REQUEST_UNKNOWN_KEY_ID',
  ],
  [
    '/package-envelope without recipientKey',
    'c-env-field',
    () => {
      const { recipientKey: _drop, ...rest } = envelopeBody(made.k).body;
      return envelope(rest);
    },
    422,
    'REQUEST_FIELD_INVALID',
  ],
];

const KEY_GEN: Case[] = [
  ['no purpose', 'c-kg-missing', () => ({ path: '/key-gen' }), 400, 'REQUEST_MISSING_PURPOSE'],
  [
    'an unknown purpose',
    'c-kg-rsa',
    () => ({ path: '/key-gen?purpose=rsa' }),
    400,
    'REQUEST_INVALID_PURPOSE',
  ],
  [
    'a repeated purpose',
    'c-kg-twice',
    () => ({ path: '/key-gen?purpose=sign&purpose=sign' }),
    400,
    'REQUEST_INVALID_PURPOSE',
  ],
  ...(['toString', '__proto__', 'constructor', 'hasOwnProperty'] as const).map((name): Case => [
    `purpose=${name} (no inherited lookup)`,
    `c-kg-${name}`,
    () => ({ path: `/key-gen?purpose=${name}` }),
    400,
    'REQUEST_INVALID_PURPOSE',
  ]),
];

const METHODS: Case[] = [
  [
    'GET on a POST operation (Allow: POST)',
    'c-405-get',
    () => ({ path: '/workflow-package' }),
    405,
    'REQUEST_METHOD_NOT_ALLOWED',
  ],
  [
    'DELETE on a GET operation (Allow: GET, HEAD)',
    'c-405-delete',
    () => ({ path: '/health', init: { method: 'DELETE' } }),
    405,
    'REQUEST_METHOD_NOT_ALLOWED',
  ],
  [
    'PUT on /string-encrypt with a body',
    'c-405-put',
    () => ({ path: '/string-encrypt', init: { method: 'PUT', body: '{"a":1}' } }),
    405,
    'REQUEST_METHOD_NOT_ALLOWED',
  ],
  [
    'POST on /key-gen',
    'c-405-keygen',
    () => ({ path: '/key-gen?purpose=sign', init: { method: 'POST' } }),
    405,
    'REQUEST_METHOD_NOT_ALLOWED',
  ],
  [
    'HEAD on a POST operation (the 405 head, no body)',
    'c-405-head',
    () => ({ path: '/workflow-package', init: { method: 'HEAD' } }),
    405,
    null,
  ],
  [
    'OPTIONS on /health',
    'c-405-options',
    () => ({ path: '/health', init: { method: 'OPTIONS' } }),
    405,
    'REQUEST_METHOD_NOT_ALLOWED',
  ],
];

/** The Express service's answer and the agent's. */
const compare = (id: string, make: () => Req) => answers(f, id, make);

const table = (cases: Case[], timeout?: number) =>
  it.each(cases)(
    '%s: the same status, headers and bytes',
    async (_what, id, make, status, code) => {
      const { express, agent } = await compare(id, make);
      expect({ status: express.status, code: codeOf(express) }).toEqual({ status, code });
      expect(agent).toEqual(express);
    },
    timeout,
  );

describe('the same answers from the Express service and the agent', () => {
  // The first of these is the agent's first step run, which starts a sandbox worker: up to 1.5 s on 2 busy cores.
  describe('good requests', () => table(GOOD, 10_000));
  describe('Accept and media type', () => table(NEGOTIATION));
  describe('the JSON body part', () => table(BODY_PART));
  describe('the release members and bootstrap signers (issue 29)', () => table(RELEASE));
  describe("/workflow-inspect's query (issue 29)", () => {
    // Run alone (vitest -t), the first of these starts the agent's sandbox worker: up to 1.5 s on 2 busy cores.
    table(INSPECT_QUERY, 10_000);
    it.each(
      INSPECT_VERDICTS.map(([what, id, query, verdict, code]) => [what, verdict, code, id, query] as const),
    )(
      '%s: both show the verdict %s (%s)',
      async (_what, verdict, code, id, query) => {
        const { express, agent } = await compare(`${id}-v`, inspectWith(query));
        for (const s of [express, agent]) {
          expect(s.status).toBe(200);
          const { rollback } = JSON.parse(s.body) as {
            rollback: { verdict: string; code: string | null; contentCompared?: boolean };
          };
          expect({ verdict: rollback.verdict, code: rollback.code }).toEqual({ verdict, code });
          // Of the package's own sequence, whether a digest was compared; absent otherwise.
          const newest = /(?:^|&)newest=([0-9]+)(:)?/.exec(query());
          expect(rollback.contentCompared).toBe(
            newest !== null && Number(newest[1]) === made.sequence ? newest[2] !== undefined : undefined,
          );
        }
      },
      10_000,
    );
  });
  describe('keys', () => table(KEYS));
  describe('parts', () => table(PARTS));
  // Two uploads of up to 32 MiB each over loopback, in this process: up to 2 s on a shared 2-core machine.
  describe('sizes', () => table(SIZES, 15_000));
  describe('workflows', () => table(WORKFLOWS));
  describe('package bytes and /package-envelope policy', () => table(PACKAGES));
  describe('/key-gen purposes', () => table(KEY_GEN));
  describe('other methods on an operation path', () => table(METHODS));

  it('answers an X-Request-Id it does not take with its own id, the rest of the bytes the same', async () => {
    const { express, agent } = await compare('an id with spaces', () => ({ path: '/key-gen' }));
    const own = (s: Seen) => {
      const id = s.headers['x-request-id']!;
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
      expect(JSON.parse(s.body).instance).toBe(`urn:uuid:${id}`);
      return { ...s, body: s.body.replace(id, '<id>'), headers: { ...s.headers, 'x-request-id': '<id>' } };
    };
    expect(express.status).toBe(400);
    expect(own(agent)).toEqual(own(express));
  });
});

/**
 * Paths no step of packager.oapp serves are answered by the agent's own router, not by the packager (ADR 0136:
 * a path no step serves is the agent's 404). The status class, media type and problem headers are the same;
 * the problem's type, title, detail and code are the agent's. The Express service's own routes /openapi.json,
 * /ready and /metrics have no step (the agent's admin listener has /health, /ready and /metrics).
 */
describe("the agent's own routing: paths no packager step serves", () => {
  const notFound = (detail: string) => ({
    type: 'urn:example:oapp:problem:agent-route-not-found',
    title: 'Route not found',
    status: 404,
    detail,
    code: 'AGENT_ROUTE_NOT_FOUND',
  });
  it.each([
    ['an unknown path', 'r-unknown', '/no-such-path', 404, 'REQUEST_NOT_FOUND'],
    ['a trailing slash', 'r-slash', '/health/', 404, 'REQUEST_NOT_FOUND'],
    ['another case', 'r-case', '/Health', 404, 'REQUEST_NOT_FOUND'],
    ['a malformed path encoding', 'r-malformed', '/%E0%A4%A', 400, 'REQUEST_MALFORMED'],
    ['GET /openapi.json', 'r-openapi', '/openapi.json', 200, null],
    ['GET /ready', 'r-ready', '/ready', 200, null],
  ] as const)('%s: the agent answers 404 AGENT_ROUTE_NOT_FOUND', async (_what, id, path, status, code) => {
    const { express, agent } = await compare(id, () => ({ path }));
    expect({ status: express.status, code: codeOf(express) }).toEqual({ status, code });
    expect(agent.status).toBe(404);
    expect(JSON.parse(agent.body)).toEqual({
      ...notFound('no trigger on this server matches the path'),
      instance: `urn:example:oapp:request:${id}`,
    });
    expect(agent.headers).toMatchObject({
      'content-type': 'application/problem+json',
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
      'x-request-id': id,
    });
  });
});
