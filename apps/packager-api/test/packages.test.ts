import { parseKey } from '@org/envelope-crypto';
import { openPackage, policyFromBootstrap } from '@org/oapp-format';
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
  type Body,
} from './helpers.js';

const srv = useServer();

async function makePackage(k = packageKeys()) {
  const res = await postForm(
    `${srv.url}/workflow-package`,
    form(packageRequest(k), JSON.stringify(sampleWorkflow())),
  );
  expect(res.status).toBe(200);
  return { k, bytes: new Uint8Array(await res.arrayBuffer()) };
}

const octets = (url: string, body: Uint8Array, headers: Record<string, string> = {}) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/octet-stream', ...headers }, body });

async function expectProblem(res: Response, status: number, code: string) {
  const body = await problem(res);
  expect({ status: res.status, code: body.code }).toEqual({ status, code });
  return body;
}

describe('POST /workflow-inspect', () => {
  it('inspects a package made over HTTP: id, two recipients, two valid signatures, no secrets', async () => {
    const { k, bytes } = await makePackage();
    const res = await octets(`${srv.url}/workflow-inspect`, bytes);
    expect(res.status).toBe(200);
    const body = (await res.json()) as Body;
    expect(body).toMatchObject({ ok: true, kind: 'app', packageId: 'invoice-uploader' });
    expect(body.packager.publicKeyHex).toBe(k.packager.publicHex);
    expect(body.recipients).toHaveLength(2);
    expect(body.signatures.map((s: Body) => [s.signText, s.valid])).toEqual([
      ['release 1.0', true],
      ['reviewed', true],
    ]);
  });

  it('rejects bytes that are not a package with FORMAT_BAD_MAGIC', async () => {
    await expectProblem(
      await octets(`${srv.url}/workflow-inspect`, new TextEncoder().encode('hello world, not a package')),
      400,
      'FORMAT_BAD_MAGIC',
    );
  });

  it('rejects a truncated package with FORMAT_TRUNCATED', async () => {
    const { bytes } = await makePackage();
    await expectProblem(
      await octets(`${srv.url}/workflow-inspect`, bytes.subarray(0, 40)),
      400,
      'FORMAT_TRUNCATED',
    );
  });

  it('rejects JSON with REQUEST_UNSUPPORTED_MEDIA_TYPE', async () => {
    const res = await fetch(`${srv.url}/workflow-inspect`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    await expectProblem(res, 415, 'REQUEST_UNSUPPORTED_MEDIA_TYPE');
    expect(res.headers.get('accept-post')).toBe('application/octet-stream');
  });

  it('rejects Accept: application/octet-stream with REQUEST_NOT_ACCEPTABLE', async () => {
    const { bytes } = await makePackage();
    await expectProblem(
      await octets(`${srv.url}/workflow-inspect`, bytes, { accept: 'application/octet-stream' }),
      406,
      'REQUEST_NOT_ACCEPTABLE',
    );
  });
});

function envelopeBody(k: ReturnType<typeof packageKeys>, extra: Record<string, unknown> = {}) {
  const reseller = newKey('reseller', 'authenticated');
  const customer = newKey('customer', 'authenticated');
  const review = newKey('review', 'sign');
  const body = {
    keys: [
      spec(k.alice, 'secret', 'me'),
      spec(k.packager, 'public', 'vendor'),
      spec(k.author, 'public', 'vendor-author'),
      spec(reseller, 'secret'),
      spec(customer, 'public'),
      spec(review, 'secret'),
    ],
    recipientKey: 'me',
    packaging: {
      packageId: 'invoice-uploader',
      packagerIdentities: ['vendor'],
      requiredSigners: [{ id: 'vendor-author' }],
    },
    packagerIdentityPrivateKey: 'reseller',
    encryptionKeys: ['customer'],
    signers: [{ key: 'review', signText: 'endorsed' }],
    ...extra,
  };
  return { body, reseller, customer, review };
}

describe('POST /package-envelope', () => {
  it('opens under the caller policy, endorses, and re-encrypts for the new recipient', async () => {
    const { k, bytes } = await makePackage();
    const e = envelopeBody(k);
    const res = await postForm(
      `${srv.url}/package-envelope`,
      form(e.body, bytes),
      'application/octet-stream',
    );
    expect(res.status).toBe(200);
    const out = new Uint8Array(await res.arrayBuffer());
    const policy = policyFromBootstrap(
      {
        packageId: 'invoice-uploader',
        packagerIdentities: ['reseller'],
        requiredSigners: ['author', 'review'],
      },
      [spec(e.reseller, 'public'), spec(k.author, 'public'), spec(e.review, 'public')],
    );
    const opened = await openPackage(out, {
      policy,
      recipientSecretKey: parseKey(spec(e.customer, 'secret')),
    });
    expect(JSON.parse(new TextDecoder().decode(opened.content)).workflows[0].name).toBe('hello');
  });

  it('rejects a package the caller cannot open with CRYPTO_NO_MATCHING_RECIPIENT', async () => {
    const { k, bytes } = await makePackage();
    const stranger = newKey('stranger', 'authenticated');
    const e = envelopeBody(k);
    e.body.keys[0] = spec(stranger, 'secret', 'me');
    await expectProblem(
      await postForm(`${srv.url}/package-envelope`, form(e.body, bytes)),
      422,
      'CRYPTO_NO_MATCHING_RECIPIENT',
    );
  });

  it('refuses a package from an untrusted packager with POLICY_PACKAGER_NOT_TRUSTED', async () => {
    const { k, bytes } = await makePackage();
    const e = envelopeBody(k);
    e.body.keys[1] = spec(newKey('x', 'authenticated'), 'public', 'vendor');
    await expectProblem(
      await postForm(`${srv.url}/package-envelope`, form(e.body, bytes)),
      403,
      'POLICY_PACKAGER_NOT_TRUSTED',
    );
  });

  it('rejects an unknown policy key id with REQUEST_UNKNOWN_KEY_ID', async () => {
    const { k, bytes } = await makePackage();
    const e = envelopeBody(k, {
      packaging: { packageId: 'invoice-uploader', packagerIdentities: ['nobody'] },
    });
    const body = await expectProblem(
      await postForm(`${srv.url}/package-envelope`, form(e.body, bytes)),
      422,
      'REQUEST_UNKNOWN_KEY_ID',
    );
    expect(body.detail).toContain('packaging.packagerIdentities[0]');
  });

  it('rejects a missing recipientKey with REQUEST_FIELD_INVALID', async () => {
    const { k, bytes } = await makePackage();
    const e = envelopeBody(k);
    const { recipientKey: _drop, ...rest } = e.body;
    await expectProblem(
      await postForm(`${srv.url}/package-envelope`, form(rest, bytes)),
      422,
      'REQUEST_FIELD_INVALID',
    );
  });
});
