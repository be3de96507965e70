import { parseKey, parseKeyTuple } from '@org/envelope-crypto';
import { decryptBootstrap, inspectPackage, openEncryptedBootstrap } from '@org/oapp-format';
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

// Issue 29 §1/§2 over HTTP: /workflow-package takes `sequence`, `expiresAt` and `formatVersion`; /bootstrap-encrypt
// also takes `signers` (the administrators); /workflow-inspect shows the release; /package-envelope's `packaging`
// takes `minimumSequence`. A bad value is a 422 naming its field.

const srv = useServer();
const workflow = JSON.stringify(sampleWorkflow());
const BOOTSTRAP = JSON.stringify([{ deploymentId: 'd1', remoteConfiguration: 'apps/x.oapp' }]);
const DAY_MS = 86_400_000;

async function packaged(extra: Record<string, unknown>) {
  const k = packageKeys();
  const res = await postForm(`${srv.url}/workflow-package`, form(packageRequest(k, extra), workflow));
  expect(res.status).toBe(200);
  const bytes = new Uint8Array(await res.arrayBuffer());
  return { k, bytes, shown: await inspectPackage(bytes) };
}

async function expectFieldProblem(res: Response, pointer: string) {
  const body = await problem(res);
  expect({ status: res.status, code: body.code }).toEqual({ status: 422, code: 'REQUEST_FIELD_INVALID' });
  expect(body.errors.map((e: { pointer: string }) => e.pointer)).toContain(pointer);
  return body;
}

describe('POST /workflow-package: the release members', () => {
  it('writes `sequence` and `expiresAt` into a format 2 package', async () => {
    const expiresAt = new Date(Date.now() + 30 * DAY_MS).toISOString();
    const { shown } = await packaged({ sequence: 42, expiresAt });
    expect(shown).toMatchObject({ format: 'oapp/v2', formatVersion: 2, sequence: 42, expiresAt });
  });

  it('by default: format 2, the sequence the creation time in whole seconds, no expiry', async () => {
    const { shown } = await packaged({});
    expect(shown).toMatchObject({ formatVersion: 2, expiresAt: null });
    expect(shown.sequence).toBe(Math.floor(Date.parse(shown.createdAt) / 1000));
  });

  it('`expiresAt` without milliseconds is taken as the same instant', async () => {
    const { shown } = await packaged({ expiresAt: '2099-01-31T12:00:00Z', sequence: 0 });
    expect(shown).toMatchObject({ sequence: 0, expiresAt: '2099-01-31T12:00:00.000Z' });
  });

  it('`formatVersion` 1 writes the older format for old readers', async () => {
    const { shown } = await packaged({ formatVersion: 1 });
    expect(shown).toMatchObject({ format: 'oapp/v1', formatVersion: 1, sequence: null, expiresAt: null });
  });

  it.each([
    [{ sequence: -1 }, '/sequence'],
    [{ sequence: 1.5 }, '/sequence'],
    [{ sequence: '7' }, '/sequence'],
    [{ expiresAt: 'tomorrow' }, '/expiresAt'],
    [{ expiresAt: '2027-02-30T00:00:00.000Z' }, '/expiresAt'],
    [{ expiresAt: '2020-01-01T00:00:00.000Z' }, '/expiresAt'],
    [{ expiresAt: '2099-01-01T00:00:00+01:00' }, '/expiresAt'],
    [{ formatVersion: 3 }, '/formatVersion'],
    [{ formatVersion: 1, sequence: 3 }, '/sequence'],
    [{ formatVersion: 1, expiresAt: '2099-01-01T00:00:00.000Z' }, '/expiresAt'],
  ])('%j → 422 REQUEST_FIELD_INVALID naming %s', async (extra, pointer) => {
    const res = await postForm(
      `${srv.url}/workflow-package`,
      form(packageRequest(packageKeys(), extra), workflow),
    );
    await expectFieldProblem(res, pointer);
  });

  it('a sequence above 2^53 − 1 is not an exact JSON number: 400 REQUEST_BODY_NOT_JSON (strict JSON)', async () => {
    const res = await postForm(
      `${srv.url}/workflow-package`,
      form(packageRequest(packageKeys(), { sequence: 2 ** 53 }), workflow),
    );
    expect({ status: res.status, code: (await problem(res)).code }).toEqual({
      status: 400,
      code: 'REQUEST_BODY_NOT_JSON',
    });
  });

  it('the release members are judged before the keys (a malformed key as well: still the field)', async () => {
    const req = packageRequest(packageKeys(), { formatVersion: 1, sequence: 1 });
    req.keys[0] = { ...req.keys[0]!, keyHex: 'zz' };
    await expectFieldProblem(await postForm(`${srv.url}/workflow-package`, form(req, workflow)), '/sequence');
  });
});

/** A form whose `body` part is `body` as JSON text with the member `"@"` spelt `spelling` (e.g. `1e3`). */
function spelt(body: Record<string, unknown>, spelling: string, stream: string): FormData {
  const fd = new FormData();
  const text = JSON.stringify(body).replace('"@"', spelling);
  expect(text).toContain(spelling);
  fd.append('body', text);
  fd.append('stream', new Blob([stream], { type: 'application/octet-stream' }), 'stream.bin');
  return fd;
}

describe('an integer member spelt with a fraction or an exponent → 422 naming it, never rounded and signed', () => {
  it.each([
    ['1e3', 1000],
    ['7.0000000000000001', 7],
    ['9007199254740990.9', Number.MAX_SAFE_INTEGER],
    ['5.0', 5],
  ])('/workflow-package sequence %s (the number %d)', async (spelling) => {
    const res = await postForm(
      `${srv.url}/workflow-package`,
      spelt(packageRequest(packageKeys(), { sequence: '@' }), spelling, workflow),
    );
    const body = await expectFieldProblem(res, '/sequence');
    expect(body.detail).toMatch(/^body field \/sequence must be written as a whole number/);
  });

  it('/workflow-package formatVersion 2.0 and 1e0; /bootstrap-encrypt sequence 1e1 (each named)', async () => {
    for (const spelling of ['2.0', '1e0'])
      await expectFieldProblem(
        await postForm(
          `${srv.url}/workflow-package`,
          spelt(packageRequest(packageKeys(), { formatVersion: '@' }), spelling, workflow),
        ),
        '/formatVersion',
      );
    await expectFieldProblem(
      await postForm(
        `${srv.url}/bootstrap-encrypt`,
        spelt(encryptKeys().body({ sequence: '@' }), '1e1', BOOTSTRAP),
      ),
      '/sequence',
    );
  });

  it('the same members written as integers are taken (the spelling is the only difference)', async () => {
    const res = await postForm(
      `${srv.url}/workflow-package`,
      spelt(packageRequest(packageKeys(), { sequence: '@' }), '1000', workflow),
    );
    expect(res.status).toBe(200);
    expect((await inspectPackage(new Uint8Array(await res.arrayBuffer()))).sequence).toBe(1000);
  });
});

describe('POST /workflow-inspect shows the release', () => {
  it('formatVersion, sequence, createdAt, expiresAt; rollback null (no policy)', async () => {
    const expiresAt = new Date(Date.now() + DAY_MS).toISOString();
    const { bytes, shown } = await packaged({ sequence: 5, expiresAt });
    const res = await fetch(`${srv.url}/workflow-inspect`, {
      method: 'POST',
      body: bytes,
      headers: { 'content-type': 'application/octet-stream' },
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      ok: true,
      formatVersion: 2,
      sequence: 5,
      createdAt: shown.createdAt,
      expiresAt,
      rollback: null,
    });
  });
});

function encryptKeys() {
  const packager = newKey('packager', 'authenticated');
  const alice = newKey('alice', 'authenticated');
  const admin = newKey('admin', 'sign');
  const body = (extra: Record<string, unknown> = {}) => ({
    keys: [spec(packager, 'secret'), spec(alice, 'public'), spec(admin, 'secret')],
    encryptionKeys: ['alice'],
    packagerIdentityPrivateKey: 'packager',
    ...extra,
  });
  const tuple = parseKeyTuple(`${packager.publicHex!}/${alice.secretHex}`);
  const administrators = {
    keys: [{ id: 'admin', publicKey: parseKey(spec(admin, 'public')).bytes }],
    threshold: 1,
  };
  return { body, tuple, administrators };
}

describe('POST /bootstrap-encrypt: signers and the release', () => {
  it('signs the bootstrap by `signers`: an agent given the administrator key opens it', async () => {
    const e = encryptKeys();
    const res = await postForm(
      `${srv.url}/bootstrap-encrypt`,
      form(e.body({ signers: [{ key: 'admin', signText: 'ops' }], sequence: 12 }), BOOTSTRAP),
    );
    expect(res.status).toBe(200);
    const opened = await openEncryptedBootstrap(await res.text(), e.tuple, {
      administrators: e.administrators,
    });
    expect(new TextDecoder().decode(opened.content)).toBe(BOOTSTRAP);
    expect(opened.release).toMatchObject({ formatVersion: 2, sequence: 12 });
    expect(opened.signers.additional.map((s) => s.id)).toEqual(['admin']);
  });

  it('S173: without `signers` the administrators refuse it (POLICY_SIGNER_THRESHOLD_NOT_MET)', async () => {
    const e = encryptKeys();
    const text = await (await postForm(`${srv.url}/bootstrap-encrypt`, form(e.body(), BOOTSTRAP))).text();
    await expect(decryptBootstrap(text, e.tuple, { administrators: e.administrators })).rejects.toMatchObject(
      {
        code: 'POLICY_SIGNER_THRESHOLD_NOT_MET',
      },
    );
    // Today's readers, without administrators, still open it.
    expect(new TextDecoder().decode(await decryptBootstrap(text, e.tuple))).toBe(BOOTSTRAP);
  });

  it('`formatVersion` 1 with `signers` → 422 naming /signers; an unknown signer key id → 422', async () => {
    const e = encryptKeys();
    await expectFieldProblem(
      await postForm(
        `${srv.url}/bootstrap-encrypt`,
        form(e.body({ formatVersion: 1, signers: [{ key: 'admin', signText: 'x' }] }), BOOTSTRAP),
      ),
      '/signers',
    );
    const unknown = await postForm(
      `${srv.url}/bootstrap-encrypt`,
      form(e.body({ signers: [{ key: 'nobody', signText: 'x' }] }), BOOTSTRAP),
    );
    expect({ status: unknown.status, code: (await problem(unknown)).code }).toEqual({
      status: 422,
      code: 'REQUEST_UNKNOWN_KEY_ID',
    });
  });

  it('`formatVersion` 1 without signers writes a bootstrap old agents read', async () => {
    const e = encryptKeys();
    const text = await (
      await postForm(`${srv.url}/bootstrap-encrypt`, form(e.body({ formatVersion: 1 }), BOOTSTRAP))
    ).text();
    const opened = await openEncryptedBootstrap(text, e.tuple);
    expect(opened.release).toMatchObject({ formatVersion: 1, sequence: null });
  });
});

describe('POST /package-envelope: `packaging.minimumSequence`', () => {
  it('refuses a package below the caller’s floor with 403 POLICY_BELOW_MINIMUM', async () => {
    const { k, bytes } = await packaged({ sequence: 7 });
    const reseller = newKey('reseller', 'authenticated');
    const customer = newKey('customer', 'authenticated');
    const body = (minimumSequence: number) => ({
      keys: [
        spec(k.alice, 'secret', 'me'),
        spec(k.packager, 'public', 'vendor'),
        spec(reseller, 'secret'),
        spec(customer, 'public'),
      ],
      recipientKey: 'me',
      packaging: { packageId: 'invoice-uploader', packagerIdentities: ['vendor'], minimumSequence },
      packagerIdentityPrivateKey: 'reseller',
      encryptionKeys: ['customer'],
    });
    const below = await postForm(`${srv.url}/package-envelope`, form(body(8), bytes));
    expect({ status: below.status, code: (await problem(below)).code }).toEqual({
      status: 403,
      code: 'POLICY_BELOW_MINIMUM',
    });
    const at = await postForm(`${srv.url}/package-envelope`, form(body(7), bytes));
    expect(at.status).toBe(200);
    // The envelope keeps the signed release: same sequence.
    expect((await inspectPackage(new Uint8Array(await at.arrayBuffer()))).sequence).toBe(7);
  });
});
