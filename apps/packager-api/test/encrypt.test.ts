import { decryptBootstrap } from '@org/oapp-format';
import { decodeHex, parseKeyTuple } from '@org/envelope-crypto';
import sodium from 'libsodium-wrappers';
import { beforeAll, describe, expect, it } from 'vitest';
import { form, newKey, postForm, problem, spec, useServer } from './helpers.js';

const srv = useServer();

beforeAll(async () => {
  await sodium.ready;
});

function keys() {
  const packager = newKey('packager', 'authenticated');
  const alice = newKey('alice', 'authenticated');
  const bob = newKey('bob', 'authenticated');
  const body = (encryptionKeys: string[]) => ({
    keys: [spec(packager, 'secret'), spec(alice, 'public'), spec(bob, 'public')],
    encryptionKeys,
    packagerIdentityPrivateKey: 'packager',
  });
  return { packager, alice, bob, body };
}

async function expectProblem(res: Response, status: number, code: string) {
  const body = await problem(res);
  expect({ status: res.status, code: body.code }).toEqual({ status, code });
  return body;
}

const bootstrap = JSON.stringify([{ deploymentId: 'd1', remoteConfiguration: 'apps/x.oapp' }]);

describe('POST /string-encrypt', () => {
  const url = () => `${srv.url}/string-encrypt`;

  it('returns a -2/ string that libsodium crypto_box_open_easy opens (nonce = first 24 bytes)', async () => {
    const k = keys();
    const res = await postForm(url(), form(k.body(['alice']), 's3cr3t value'), 'text/plain');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    const text = await res.text();
    expect(text.startsWith('-2/')).toBe(true);
    const raw = sodium.from_base64(text.slice(3), sodium.base64_variants.ORIGINAL);
    const plain = sodium.crypto_box_open_easy(
      raw.subarray(24),
      raw.subarray(0, 24),
      decodeHex(k.packager.publicHex!, 32),
      decodeHex(k.alice.secretHex, 32),
    );
    expect(sodium.to_string(plain)).toBe('s3cr3t value');
  });

  it('gives different outputs for the same string (S112)', async () => {
    const k = keys();
    const a = await (await postForm(url(), form(k.body(['alice']), 'x'))).text();
    const b = await (await postForm(url(), form(k.body(['alice']), 'x'))).text();
    expect(a).not.toBe(b);
  });

  it('rejects two encryptionKeys ids with REQUEST_ONE_RECIPIENT_REQUIRED', async () => {
    const res = await postForm(url(), form(keys().body(['alice', 'bob']), 'x'));
    await expectProblem(res, 422, 'REQUEST_ONE_RECIPIENT_REQUIRED');
  });

  it('rejects zero encryptionKeys ids with REQUEST_ONE_RECIPIENT_REQUIRED', async () => {
    await expectProblem(
      await postForm(url(), form(keys().body([]), 'x')),
      422,
      'REQUEST_ONE_RECIPIENT_REQUIRED',
    );
  });

  it('rejects a plaintext over 64 KiB with UPLOAD_FILE_TOO_LARGE; the next request succeeds', async () => {
    const k = keys();
    const res = await postForm(url(), form(k.body(['alice']), new Uint8Array(64 * 1024 + 1)));
    await expectProblem(res, 413, 'UPLOAD_FILE_TOO_LARGE');
    expect((await postForm(url(), form(k.body(['alice']), new Uint8Array(64 * 1024)))).status).toBe(200);
  });

  it('rejects Accept: application/json with REQUEST_NOT_ACCEPTABLE', async () => {
    await expectProblem(
      await postForm(url(), form(keys().body(['alice']), 'x'), 'application/json'),
      406,
      'REQUEST_NOT_ACCEPTABLE',
    );
  });

  it('rejects a missing stream part with UPLOAD_MISSING_PART', async () => {
    const fd = new FormData();
    fd.append('body', JSON.stringify(keys().body(['alice'])));
    await expectProblem(await postForm(url(), fd), 400, 'UPLOAD_MISSING_PART');
  });

  it('rejects stream sent as a text field with UPLOAD_STREAM_MUST_BE_FILE (S15)', async () => {
    const fd = new FormData();
    fd.append('body', JSON.stringify(keys().body(['alice'])));
    fd.append('stream', 'plain text field');
    await expectProblem(await postForm(url(), fd), 400, 'UPLOAD_STREAM_MUST_BE_FILE');
  });

  it('rejects packageId (a workflow-package field) with REQUEST_FIELD_INVALID', async () => {
    const res = await postForm(url(), form({ ...keys().body(['alice']), packageId: 'p' }, 'x'));
    const body = await expectProblem(res, 422, 'REQUEST_FIELD_INVALID');
    expect(body.errors).toContainEqual({ pointer: '/packageId', detail: 'is not a known field' });
  });
});

describe('POST /bootstrap-encrypt', () => {
  const url = () => `${srv.url}/bootstrap-encrypt`;

  it('validates, encrypts for two recipients, and decryptBootstrap opens it for each', async () => {
    const k = keys();
    const res = await postForm(url(), form(k.body(['alice', 'bob']), bootstrap), 'application/octet-stream');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/octet-stream');
    const text = await res.text();
    for (const r of [k.alice, k.bob]) {
      const plain = await decryptBootstrap(text, parseKeyTuple(`${k.packager.publicHex}/${r.secretHex}`));
      expect(new TextDecoder().decode(plain)).toBe(bootstrap);
    }
  });

  it('serves the Base64 as text/plain when that is what the client accepts', async () => {
    const res = await postForm(url(), form(keys().body(['alice']), bootstrap), 'text/plain');
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
  });

  it('rejects an invalid bootstrap with WORKFLOW_BOOTSTRAP_INVALID and pointers; nothing encrypted', async () => {
    const bad = JSON.stringify([{ deploymentId: 'd1' }]);
    const body = await expectProblem(
      await postForm(url(), form(keys().body(['alice']), bad)),
      422,
      'WORKFLOW_BOOTSTRAP_INVALID',
    );
    expect(body.errors.length).toBeGreaterThan(0);
    expect(typeof body.errors[0].pointer).toBe('string');
  });

  it('rejects a non-JSON bootstrap with a WORKFLOW_JSON code (400)', async () => {
    const res = await postForm(url(), form(keys().body(['alice']), '[{"deploymentId":'));
    const body = await problem(res);
    expect(res.status).toBe(400);
    expect(body.code).toBe('WORKFLOW_JSON_INVALID');
  });

  it('rejects an empty encryptionKeys with REQUEST_FIELD_INVALID', async () => {
    await expectProblem(
      await postForm(url(), form(keys().body([]), bootstrap)),
      422,
      'REQUEST_FIELD_INVALID',
    );
  });

  it('rejects Accept: application/json with REQUEST_NOT_ACCEPTABLE', async () => {
    await expectProblem(
      await postForm(url(), form(keys().body(['alice']), bootstrap), 'application/json'),
      406,
      'REQUEST_NOT_ACCEPTABLE',
    );
  });

  it('rejects a secret key as recipient with CRYPTO_WRONG_KEY_TYPE (S116)', async () => {
    const k = keys();
    const body = k.body(['packager']);
    await expectProblem(await postForm(url(), form(body, bootstrap)), 400, 'CRYPTO_WRONG_KEY_TYPE');
  });
});
