import { createHash } from 'node:crypto';
import { MAGIC, openPackage, policyFromBootstrap } from '@org/oapp-format';
import { parseKey } from '@org/envelope-crypto';
import { describe, expect, it } from 'vitest';
import {
  form,
  newKey,
  packageKeys,
  packageRequest,
  postForm,
  problem,
  sampleWorkflow,
  spec,
  useServer,
} from './helpers.js';

const srv = useServer({ workflowBytes: 64 * 1024 });
const endpoint = () => `${srv.url}/workflow-package`;
const workflow = JSON.stringify(sampleWorkflow());

async function expectProblem(res: Response, status: number, code: string) {
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  const body = await problem(res);
  expect({ status: res.status, code: body.code }).toEqual({ status, code });
  return body;
}

describe('POST /workflow-package', () => {
  it('packages a workflow for two recipients with two signers; the library verifies and opens it', async () => {
    const k = packageKeys();
    const res = await postForm(endpoint(), form(packageRequest(k), workflow), 'application/octet-stream');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/octet-stream');
    const bytes = new Uint8Array(await res.arrayBuffer());
    expect(bytes.subarray(0, MAGIC.length)).toEqual(MAGIC);
    const keys = [spec(k.packager, 'public'), spec(k.author, 'public'), spec(k.ops, 'public')];
    const policy = policyFromBootstrap(
      { packageId: 'invoice-uploader', packagerIdentities: ['packager'], requiredSigners: ['author', 'ops'] },
      keys,
    );
    for (const r of [k.alice, k.bob]) {
      const recipientSecretKey = parseKey(spec(r, 'secret'));
      const opened = await openPackage(bytes, { policy, recipientSecretKey });
      const content = JSON.parse(new TextDecoder().decode(opened.content));
      expect(content.comment).toBeUndefined();
      expect(content.workflows[0].steps[0].resultsProcessor.script).toContain("context.setBody('hello')");
      expect(opened.signers.required.map((s) => s.id)).toEqual(['author', 'ops']);
    }
  });

  // The content is the JCS form of the compiled workflow (ADR 0085). Its SHA-256 for this fixed workflow is pinned:
  // comments stripped outside free-form data, `"resource": ""` dropped, a resource inlined twice, a processor chain
  // under httpStatusHandling, numbers and escapes in their canonical form. A change of the compiler's or the
  // writer's code must leave these bytes as they are.
  it('packages the JCS form of the compiled workflow, byte for byte as pinned', async () => {
    const pinned = {
      comment: 'top',
      defaultStepProperties: { comment: 'd', urlGenerator: { script: 'u', comment: 'c' } },
      workflows: [
        {
          name: 'pinned',
          comment: 'w',
          data: { comment: 'kept: data is free-form', z: 1, a: [1, 2.5, -0, 1.5e-7, 'é\u2028"\\\n'] },
          steps: [
            {
              stepId: 's1',
              trigger: { runOnce: true },
              resultsProcessor: { resource: '/general/hello.js', comment: 'r' },
            },
            {
              stepId: 's2',
              payloadGenerator: { script: 'p', resource: '' },
              httpStatusHandling: {
                comment: 'h',
                '404': { processors: [{ script: 'a' }, { resource: 'general/hello.js' }] },
              },
            },
          ],
        },
      ],
    };
    const k = packageKeys();
    const res = await postForm(endpoint(), form(packageRequest(k), JSON.stringify(pinned)));
    expect(res.status).toBe(200);
    const bytes = new Uint8Array(await res.arrayBuffer());
    const keys = [spec(k.packager, 'public'), spec(k.author, 'public'), spec(k.ops, 'public')];
    const policy = policyFromBootstrap(
      { packageId: 'invoice-uploader', packagerIdentities: ['packager'], requiredSigners: ['author', 'ops'] },
      keys,
    );
    const opened = await openPackage(bytes, {
      policy,
      recipientSecretKey: parseKey(spec(k.alice, 'secret')),
    });
    expect(createHash('sha256').update(opened.content).digest('hex')).toBe(
      'fb8a201e23a8ad3c68faa10d86f0d91d7e71f2b9a7bbcfb16c9bc632ee24bcec',
    );
  });

  it('honours a missing Accept and */*', async () => {
    const k = packageKeys();
    for (const accept of [undefined, '*/*']) {
      const res = await postForm(endpoint(), form(packageRequest(k), workflow), accept);
      expect(res.status).toBe(200);
    }
  });

  it('embeds a license object', async () => {
    const k = packageKeys();
    const res = await postForm(endpoint(), form(packageRequest(k, { license: { seats: 5 } }), workflow));
    expect(res.status).toBe(200);
  });

  it('rejects Accept: application/json with REQUEST_NOT_ACCEPTABLE', async () => {
    const res = await postForm(endpoint(), form(packageRequest(packageKeys()), workflow), 'application/json');
    await expectProblem(res, 406, 'REQUEST_NOT_ACCEPTABLE');
  });

  it('rejects a body without stream with UPLOAD_MISSING_PART naming stream (S18)', async () => {
    const fd = new FormData();
    fd.append('body', JSON.stringify(packageRequest(packageKeys())));
    const body = await expectProblem(await postForm(endpoint(), fd), 400, 'UPLOAD_MISSING_PART');
    expect(body.detail).toContain('stream');
  });

  // Regression: a third part after body and stream was 413 UPLOAD_PARTS_LIMIT; it is an unexpected part.
  it('rejects an extra third part with 400 UPLOAD_UNKNOWN_PART, as an extra first part', async () => {
    const third = form(packageRequest(packageKeys()), workflow);
    third.append('extra', 'x');
    const first = new FormData();
    first.append('extra', 'x');
    for (const [k, v] of form(packageRequest(packageKeys()), workflow)) first.append(k, v);
    for (const fd of [third, first]) {
      const res = await postForm(endpoint(), fd);
      expect(res.status).toBe(400);
      expect((await problem(res)).code).toBe('UPLOAD_UNKNOWN_PART');
    }
  });

  it('rejects a wrongly named part with UPLOAD_UNKNOWN_PART', async () => {
    const fd = new FormData();
    fd.append('meta', JSON.stringify(packageRequest(packageKeys())));
    fd.append('stream', new Blob([workflow]), 'w.json');
    await expectProblem(await postForm(endpoint(), fd), 400, 'UPLOAD_UNKNOWN_PART');
  });

  it('rejects body sent as a file with UPLOAD_BODY_MUST_BE_FIELD (S16)', async () => {
    const fd = new FormData();
    fd.append('body', new Blob([JSON.stringify(packageRequest(packageKeys()))]), 'body.json');
    fd.append('stream', new Blob([workflow]), 'w.json');
    await expectProblem(await postForm(endpoint(), fd), 400, 'UPLOAD_BODY_MUST_BE_FIELD');
  });

  it('rejects a non-JSON body with REQUEST_BODY_NOT_JSON', async () => {
    await expectProblem(
      await postForm(endpoint(), form('{"packageId":', workflow, true)),
      400,
      'REQUEST_BODY_NOT_JSON',
    );
  });

  it('rejects duplicate keys in body with REQUEST_BODY_DUPLICATE_KEY (S65)', async () => {
    const text = '{"packageId":"a","packageId":"b"}';
    await expectProblem(
      await postForm(endpoint(), form(text, workflow, true)),
      400,
      'REQUEST_BODY_DUPLICATE_KEY',
    );
  });

  it('rejects deep nesting with REQUEST_BODY_TOO_DEEP (S3)', async () => {
    const text = '['.repeat(20_000) + ']'.repeat(20_000);
    await expectProblem(await postForm(endpoint(), form(text, workflow, true)), 400, 'REQUEST_BODY_TOO_DEEP');
  });

  it('refuses __proto__ as an unknown field and pollutes nothing (S4)', async () => {
    const text = JSON.stringify(packageRequest(packageKeys())).replace(
      '{',
      '{"__proto__":{"polluted":true},',
    );
    const body = await expectProblem(
      await postForm(endpoint(), form(text, workflow, true)),
      422,
      'REQUEST_FIELD_INVALID',
    );
    expect(body.errors).toContainEqual({ pointer: '/__proto__', detail: 'is not a known field' });
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });

  it('rejects a wrong field name with REQUEST_FIELD_INVALID naming it', async () => {
    const req: Record<string, unknown> = packageRequest(packageKeys());
    req['encryptionKey'] = req['encryptionKeys'];
    delete req['encryptionKeys'];
    const body = await expectProblem(
      await postForm(endpoint(), form(req, workflow)),
      422,
      'REQUEST_FIELD_INVALID',
    );
    expect(body.errors).toEqual(
      expect.arrayContaining([
        { pointer: '/encryptionKeys', detail: 'is required' },
        { pointer: '/encryptionKey', detail: 'is not a known field' },
      ]),
    );
  });

  it('requires packageId', async () => {
    const req: Record<string, unknown> = packageRequest(packageKeys());
    delete req['packageId'];
    const body = await expectProblem(
      await postForm(endpoint(), form(req, workflow)),
      422,
      'REQUEST_FIELD_INVALID',
    );
    expect(body.detail).toContain('packageId');
  });

  it('rejects an unknown key id with REQUEST_UNKNOWN_KEY_ID naming field and id', async () => {
    const req = packageRequest(packageKeys(), { encryptionKeys: ['alice', 'carol'] });
    const body = await expectProblem(
      await postForm(endpoint(), form(req, workflow)),
      422,
      'REQUEST_UNKNOWN_KEY_ID',
    );
    expect(body.detail).toContain('encryptionKeys[1]');
    expect(body.detail).toContain('carol');
  });

  it('rejects a sign key as recipient with CRYPTO_WRONG_KEY_PURPOSE (S116)', async () => {
    const k = packageKeys();
    const req = packageRequest(k, { encryptionKeys: ['alice', 'author'] });
    const body = await expectProblem(
      await postForm(endpoint(), form(req, workflow)),
      400,
      'CRYPTO_WRONG_KEY_PURPOSE',
    );
    expect(body.detail).toContain('encryptionKeys[1]');
  });

  it('rejects an authenticated key as signer and a public packager identity (S116)', async () => {
    const k = packageKeys();
    const asSigner = packageRequest(k, { signers: [{ key: 'packager', signText: 'x' }] });
    await expectProblem(
      await postForm(endpoint(), form(asSigner, workflow)),
      400,
      'CRYPTO_WRONG_KEY_PURPOSE',
    );
    const pub = packageRequest(k, { packagerIdentityPrivateKey: 'alice' });
    const body = await expectProblem(
      await postForm(endpoint(), form(pub, workflow)),
      400,
      'CRYPTO_WRONG_KEY_TYPE',
    );
    expect(body.detail).toContain('packagerIdentityPrivateKey');
  });

  it.each([
    ['odd length (S63)', (h: string) => h.slice(0, 63), 'CRYPTO_BAD_HEX'],
    ['a non-hex character (S64)', (h: string) => h.slice(0, 62) + 'fg', 'CRYPTO_BAD_HEX'],
    ['62 characters (S113)', (h: string) => h.slice(0, 62), 'CRYPTO_BAD_KEY_LENGTH'],
    ['66 characters (S113)', (h: string) => h + 'ab', 'CRYPTO_BAD_KEY_LENGTH'],
  ])('rejects a recipient keyHex of %s naming the key id', async (_name, mutate, code) => {
    const k = packageKeys();
    const req = packageRequest(k);
    req.keys[1] = { ...req.keys[1]!, keyHex: mutate(req.keys[1]!.keyHex) };
    const body = await expectProblem(await postForm(endpoint(), form(req, workflow)), 400, code);
    expect(body.detail).toContain('alice');
  });

  it('rejects a sign secret whose public half belongs to another key with CRYPTO_KEY_MISMATCH (S95)', async () => {
    const k = packageKeys();
    const req = packageRequest(k);
    req.keys[3] = { ...req.keys[3]!, keyHex: k.author.secretHex.slice(0, 64) + k.ops.publicHex! };
    const body = await expectProblem(
      await postForm(endpoint(), form(req, workflow)),
      400,
      'CRYPTO_KEY_MISMATCH',
    );
    expect(body.detail).toContain('author');
  });

  it('rejects an all-zero recipient key with CRYPTO_WEAK_KEY (S115)', async () => {
    const req = packageRequest(packageKeys());
    req.keys[1] = { ...req.keys[1]!, keyHex: '0'.repeat(64) };
    const body = await expectProblem(await postForm(endpoint(), form(req, workflow)), 400, 'CRYPTO_WEAK_KEY');
    expect(body.detail).toContain('alice');
  });

  it('rejects an invalid workflow with WORKFLOW_SCHEMA_INVALID and pointers', async () => {
    const res = await postForm(endpoint(), form(packageRequest(packageKeys()), '{"workflows":[]}'));
    const body = await expectProblem(res, 422, 'WORKFLOW_SCHEMA_INVALID');
    expect(body.errors[0].pointer).toBe('/workflows');
  });

  it('rejects a missing resource with WORKFLOW_RESOURCE_NOT_FOUND', async () => {
    const wf = JSON.stringify(sampleWorkflow()).replace('/general/hello.js', '/general/none.js');
    await expectProblem(
      await postForm(endpoint(), form(packageRequest(packageKeys()), wf)),
      422,
      'WORKFLOW_RESOURCE_NOT_FOUND',
    );
  });

  it('rejects an oversized stream with UPLOAD_FILE_TOO_LARGE; the next request succeeds', async () => {
    const big = new Uint8Array(64 * 1024 + 1).fill(0x20);
    await expectProblem(
      await postForm(endpoint(), form(packageRequest(packageKeys()), big)),
      413,
      'UPLOAD_FILE_TOO_LARGE',
    );
    const ok = await postForm(endpoint(), form(packageRequest(packageKeys()), workflow));
    expect(ok.status).toBe(200);
  });

  it('rejects a body over the field cap with UPLOAD_FIELD_TOO_LARGE (S17); the next request succeeds', async () => {
    const req = packageRequest(packageKeys(), {
      signers: [{ key: 'author', signText: 'x'.repeat(100 * 1024) }],
    });
    await expectProblem(await postForm(endpoint(), form(req, workflow)), 413, 'UPLOAD_FIELD_TOO_LARGE');
    expect((await postForm(endpoint(), form(packageRequest(packageKeys()), workflow))).status).toBe(200);
  });

  it('rejects a huge body from its declared length with UPLOAD_REQUEST_TOO_LARGE, unparsed (S109)', async () => {
    const req = packageRequest(packageKeys(), {
      signers: [{ key: 'author', signText: 'x'.repeat(4 * 1024 * 1024) }],
    });
    await expectProblem(await postForm(endpoint(), form(req, workflow)), 413, 'UPLOAD_REQUEST_TOO_LARGE');
    expect((await postForm(endpoint(), form(packageRequest(packageKeys()), workflow))).status).toBe(200);
  });

  it('rejects a truncated multipart body with UPLOAD_MALFORMED; the next request succeeds', async () => {
    const boundary = 'XbOuNdArY';
    const text =
      `--${boundary}\r\nContent-Disposition: form-data; name="body"\r\n\r\n` +
      JSON.stringify(packageRequest(packageKeys())) +
      `\r\n--${boundary}\r\nContent-Disposition: form-data; name="stream"; filename="w.json"\r\n` +
      `Content-Type: application/octet-stream\r\n\r\n{"workflows":`;
    const res = await fetch(endpoint(), {
      method: 'POST',
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
      body: text,
    });
    await expectProblem(res, 400, 'UPLOAD_MALFORMED');
    expect((await postForm(endpoint(), form(packageRequest(packageKeys()), workflow))).status).toBe(200);
  });

  it('rejects JSON instead of multipart with REQUEST_UNSUPPORTED_MEDIA_TYPE and Accept-Post', async () => {
    const res = await fetch(endpoint(), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(packageRequest(packageKeys())),
    });
    await expectProblem(res, 415, 'REQUEST_UNSUPPORTED_MEDIA_TYPE');
    expect(res.headers.get('accept-post')).toBe('multipart/form-data');
  });

  it('rejects two keys with one id with REQUEST_DUPLICATE_KEY_ID', async () => {
    const k = packageKeys();
    const req = packageRequest(k);
    req.keys.push(spec(newKey('alice', 'authenticated'), 'public'));
    await expectProblem(await postForm(endpoint(), form(req, workflow)), 422, 'REQUEST_DUPLICATE_KEY_ID');
  });
});
