import { parseKey, parseKeyTuple, decryptString } from '@org/envelope-crypto';
import { decryptBootstrap, inspectPackage, openPackage, policyFromBootstrap } from '@org/oapp-format';
import { describe, expect, it } from 'vitest';
import {
  createPackagerCapability,
  PACKAGER_OPERATIONS,
  type PackagerCapability,
  type PackagerDirs,
} from '../src/index.js';
import {
  encryptBody,
  form,
  makeDirs,
  newKey,
  packageKeys,
  packageRequest,
  post,
  sampleWorkflow,
  spec,
  useCapabilityServer,
  type Body,
} from './helpers.js';

let cap: PackagerCapability = createPackagerCapability({ limits: { bootstrapBytes: 1024 * 1024 } });
let dirs: PackagerDirs = makeDirs();
const srv = useCapabilityServer(
  () => cap,
  () => dirs,
);

const bootstrap = JSON.stringify([{ deploymentId: 'd1', remoteConfiguration: 'apps/x.oapp' }]);

async function makePackage() {
  const k = packageKeys();
  const res = await post(
    `${srv.url}/workflow-package`,
    form(packageRequest(k), JSON.stringify(sampleWorkflow())),
    'mk',
  );
  expect(res.status).toBe(200);
  return { k, bytes: new Uint8Array(await res.arrayBuffer()) };
}

describe('createPackagerCapability', () => {
  it('lists every operation, by the names of the API paths', () => {
    expect(cap.operations).toEqual(PACKAGER_OPERATIONS);
    expect([...cap.operations]).toEqual([
      'workflow-package',
      'bootstrap-encrypt',
      'string-encrypt',
      'workflow-compile',
      'workflow-hash',
      'workflow-inspect',
      'package-envelope',
      'build-workflows',
      'key-gen',
      'health',
    ]);
  });

  it('refuses limits that are not whole numbers of bytes, and unknown limits', () => {
    expect(() => createPackagerCapability({ limits: { workflowBytes: -1 } })).toThrow(RangeError);
    expect(() => createPackagerCapability({ limits: { workflowBytes: 1.5 } })).toThrow(
      /limits\.workflowBytes/,
    );
    expect(() => createPackagerCapability({ limits: { nope: 1 } as never })).toThrow(TypeError);
  });

  it('gives the upload options a checkContinue listener judges headers by (S8): the step cap replaces the multipart one', () => {
    const mib = 1024 * 1024;
    expect(cap.uploadOptions('workflow-package')).toMatchObject({
      multipartByteLimit: 8 * mib,
      bodyFieldByteLimit: 64 * 1024,
      requireParts: ['body', 'stream'],
    });
    expect(cap.uploadOptions('workflow-package', 1000)).toMatchObject({ multipartByteLimit: 1000 });
    expect(cap.uploadOptions('workflow-inspect', 1000)).toEqual({ rawBodyByteLimit: 32 * mib });
    expect(cap.uploadOptions('health')).toBeUndefined();
    expect(cap.uploadOptions('key-gen', 1000)).toBeUndefined();
    expect(() => cap.uploadOptions('nope')).toThrow(RangeError);
    expect(() => cap.uploadOptions('workflow-package', -1)).toThrow(RangeError);
  });

  it('rejects an unknown operation with a RangeError (a host bug, answered as the generic 500)', async () => {
    const res = await fetch(`${srv.url}/no-such-operation`, { headers: { 'x-request-id': 'unknown-op' } });
    expect(res.status).toBe(500);
    expect(srv.answers.get('unknown-op')!.failure).toBeInstanceOf(RangeError);
    expect(await res.json()).toEqual({
      type: 'about:blank',
      title: 'Internal Server Error',
      status: 500,
      instance: 'urn:example:oapp:request:unknown-op',
      code: 'INTERNAL',
    });
  });
});

describe('each operation: read → run → answer on a node:http server', () => {
  it('workflow-package: compiles, signs and encrypts; the package opens for a recipient', async () => {
    const k = packageKeys();
    const res = await post(
      `${srv.url}/workflow-package`,
      form(packageRequest(k), JSON.stringify(sampleWorkflow())),
      'wp-1',
    );
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/octet-stream');
    expect(res.headers.get('vary')).toBe('Accept');
    const bytes = new Uint8Array(await res.arrayBuffer());
    const policy = policyFromBootstrap(
      { packageId: 'invoice-uploader', packagerIdentities: ['packager'], requiredSigners: ['author', 'ops'] },
      [spec(k.packager, 'public'), spec(k.author, 'public'), spec(k.ops, 'public')],
    );
    const opened = await openPackage(bytes, { policy, recipientSecretKey: parseKey(spec(k.bob, 'secret')) });
    expect(JSON.parse(new TextDecoder().decode(opened.content)).workflows[0].name).toBe('hello');
    expect(srv.phases.get('wp-1')).toBe('run');
  });

  it('bootstrap-encrypt: validates, then encrypts for every recipient (Base64 text)', async () => {
    const alice = newKey('alice', 'authenticated');
    const { packager, body } = encryptBody([alice]);
    const res = await post(`${srv.url}/bootstrap-encrypt`, form(body, bootstrap), 'be-1', {
      accept: 'text/plain',
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    const plain = await decryptBootstrap(
      await res.text(),
      parseKeyTuple(`${packager.publicHex}/${alice.secretHex}`),
    );
    expect(new TextDecoder().decode(plain)).toBe(bootstrap);
  });

  it('string-encrypt: one recipient → a -2/ string that decrypts to the plaintext', async () => {
    const alice = newKey('alice', 'authenticated');
    const { packager, body } = encryptBody([alice]);
    const res = await post(`${srv.url}/string-encrypt`, form(body, 'the secret'), 'se-1');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    const text = await res.text();
    expect(text.startsWith('-2/')).toBe(true);
    const plain = decryptString(text, [parseKeyTuple(`${packager.publicHex}/${alice.secretHex}`)]);
    expect(new TextDecoder().decode(plain)).toBe('the secret');
  });

  it('workflow-compile and workflow-hash: JSON in, JSON out', async () => {
    const wf = JSON.stringify(sampleWorkflow());
    const json = { 'content-type': 'application/json' };
    const compiled = await post(`${srv.url}/workflow-compile`, wf, 'wc-1', json);
    expect(compiled.status).toBe(200);
    expect(compiled.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const c = (await compiled.json()) as Body;
    expect(c.ok).toBe(true);
    expect(c.resources).toEqual([{ path: '/general/hello.js', bytes: 26, references: 1 }]);
    const hashed = (await (await post(`${srv.url}/workflow-hash`, wf, 'wh-1', json)).json()) as Body;
    expect(hashed).toMatchObject({ ok: true, algorithm: 'sha-256' });
    expect(hashed.hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('workflow-inspect: raw package bytes → inspection JSON', async () => {
    const { bytes } = await makePackage();
    const res = await post(`${srv.url}/workflow-inspect`, bytes, 'wi-1', {
      'content-type': 'application/octet-stream',
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Body;
    expect(body).toMatchObject({ ok: true, packageId: 'invoice-uploader' });
    expect(body.packageId).toBe((await inspectPackage(bytes)).packageId);
  });

  it('package-envelope: opens under the caller policy, endorses, re-encrypts', async () => {
    const { k, bytes } = await makePackage();
    const reseller = newKey('reseller', 'authenticated');
    const customer = newKey('customer', 'authenticated');
    const body = {
      keys: [
        spec(k.alice, 'secret', 'me'),
        spec(k.packager, 'public', 'vendor'),
        spec(k.author, 'public', 'vendor-author'),
        spec(reseller, 'secret'),
        spec(customer, 'public'),
      ],
      recipientKey: 'me',
      packaging: {
        packageId: 'invoice-uploader',
        packagerIdentities: ['vendor'],
        requiredSigners: ['vendor-author'],
      },
      packagerIdentityPrivateKey: 'reseller',
      encryptionKeys: ['customer'],
    };
    const res = await post(`${srv.url}/package-envelope`, form(body, bytes), 'pe-1');
    expect(res.status).toBe(200);
    const out = new Uint8Array(await res.arrayBuffer());
    const policy = policyFromBootstrap(
      { packageId: 'invoice-uploader', packagerIdentities: ['reseller'], requiredSigners: ['author'] },
      [spec(reseller, 'public'), spec(k.author, 'public')],
    );
    const opened = await openPackage(out, { policy, recipientSecretKey: parseKey(spec(customer, 'secret')) });
    expect(JSON.parse(new TextDecoder().decode(opened.content)).workflows[0].name).toBe('hello');
  });

  it('build-workflows: reads source workflows from the resource, then the workflow source directories', async () => {
    const manifest = (sourceWorkflow: string) =>
      JSON.stringify({ includes: [{ sourceWorkflow, customizations: [] }] });
    const json = { 'content-type': 'application/json' };
    const fromResources = (await (
      await post(`${srv.url}/build-workflows`, manifest('health.workflow.json'), 'bw-1', json)
    ).json()) as Body;
    expect(fromResources.workflow.workflows[0].name).toBe('health');
    const fromSources = (await (
      await post(`${srv.url}/build-workflows`, manifest('only-here.workflow.json'), 'bw-2', json)
    ).json()) as Body;
    expect(fromSources.workflow.workflows[0].name).toBe('only-here');
  });

  it('key-gen: the query read as Express reads it; no-store and Vary on every answer', async () => {
    const res = await fetch(`${srv.url}/key-gen?purpose=box`, { headers: { 'x-request-id': 'kg-1' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('vary')).toBe('Accept');
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const body = (await res.json()) as Body;
    expect(body).toMatchObject({ ok: true, purpose: 'authenticated', encoding: 'hex' });
    parseKey({ purpose: 'authenticated', type: 'secret', keyHex: body.keyPair.secretKeyHex });

    for (const [query, code] of [
      ['', 'REQUEST_MISSING_PURPOSE'],
      ['?purpose=', 'REQUEST_MISSING_PURPOSE'],
      ['?purpose=sign&purpose=sign', 'REQUEST_INVALID_PURPOSE'],
      ['?purpose=toString', 'REQUEST_INVALID_PURPOSE'],
    ] as const) {
      const refused = await fetch(`${srv.url}/key-gen${query}`, { headers: { 'x-request-id': 'kg-2' } });
      expect(refused.status).toBe(400);
      expect(refused.headers.get('cache-control')).toBe('no-store');
      expect(refused.headers.get('vary')).toBe('Accept');
      expect(((await refused.json()) as Body).code).toBe(code);
      expect(srv.phases.get('kg-2')).toBe('read');
    }
  });

  it('health: {"ok":true}', async () => {
    const res = await fetch(`${srv.url}/health`, { headers: { 'x-request-id': 'h-1' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('vary')).toBeNull();
    // Regression (issue 26 conformance suite): a success answer lacked the nosniff every Express answer carries.
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(await res.text()).toBe('{"ok":true}');
  });
});

describe('refusals', () => {
  it('answers a refused read with its problem: status, body for the request id, Vary, Accept-Post', async () => {
    const res = await post(`${srv.url}/workflow-package`, '{}', 'refused-1', {
      'content-type': 'application/json',
    });
    expect(res.status).toBe(415);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    expect(res.headers.get('accept-post')).toBe('multipart/form-data');
    expect(res.headers.get('vary')).toBe('Accept');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(await res.text()).toBe(
      JSON.stringify({
        type: 'urn:example:oapp:problem:request-unsupported-media-type',
        title: 'Unsupported media type',
        status: 415,
        detail: 'this endpoint takes multipart/form-data only',
        instance: 'urn:example:oapp:request:refused-1',
        code: 'REQUEST_UNSUPPORTED_MEDIA_TYPE',
      }),
    );
    expect(srv.answers.get('refused-1')).not.toHaveProperty('failure');
  });

  it('answers Accept first (406), before the body is judged', async () => {
    const res = await post(`${srv.url}/workflow-compile`, 'not json', 'refused-2', {
      'content-type': 'application/json',
      accept: 'image/png',
    });
    expect(res.status).toBe(406);
    expect(((await res.json()) as Body).code).toBe('REQUEST_NOT_ACCEPTABLE');
  });

  it('answers another method with 405 and Allow, as the Express service routes', async () => {
    const get = await fetch(`${srv.url}/workflow-package`, { headers: { 'x-request-id': 'm-1' } });
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
    const del = await fetch(`${srv.url}/health`, { method: 'DELETE', headers: { 'x-request-id': 'm-2' } });
    expect(del.headers.get('allow')).toBe('GET, HEAD');
    expect(((await del.json()) as Body).code).toBe('REQUEST_METHOD_NOT_ALLOWED');
  });

  it('answers an operation refusal from run with its problem (no failure)', async () => {
    const alice = newKey('alice', 'authenticated');
    const { body } = encryptBody([alice]);
    const res = await post(`${srv.url}/bootstrap-encrypt`, form(body, '[{"deploymentId":"d1"}]'), 'run-1');
    expect(res.status).toBe(422);
    expect(((await res.json()) as Body).code).toBe('WORKFLOW_BOOTSTRAP_INVALID');
    expect(srv.phases.get('run-1')).toBe('run');
    expect(srv.answers.get('run-1')).not.toHaveProperty('failure');
    expect(srv.answers.get('run-1')!.headers['vary']).toBe('Accept');
  });

  it('takes the multipart cap from the read when given (the step limit)', async () => {
    const alice = newKey('alice', 'authenticated');
    const { body } = encryptBody([alice]);
    const fd = () => form(body, 'x'.repeat(2000));
    const capped = await post(`${srv.url}/string-encrypt`, fd(), 'cap-1', {
      'x-multipart-byte-limit': '1000',
    });
    expect(capped.status).toBe(413);
    expect(((await capped.json()) as Body).code).toMatch(/^UPLOAD_(REQUEST|FILE)_TOO_LARGE$/);
    expect(srv.phases.get('cap-1')).toBe('read');
    const roomy = await post(`${srv.url}/string-encrypt`, fd(), 'cap-2', {
      'x-multipart-byte-limit': '100000',
    });
    expect(roomy.status).toBe(200);
  });
});

// Keep the shared state fresh for a re-run in watch mode.
cap = createPackagerCapability({ limits: { bootstrapBytes: 1024 * 1024 } });
dirs = makeDirs();
