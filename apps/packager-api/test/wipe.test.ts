import type * as EnvelopeCrypto from '@org/envelope-crypto';
import type { Key } from '@org/envelope-crypto';
import type * as OappFormat from '@org/oapp-format';
import type * as WorkflowCompiler from '@org/workflow-compiler';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { BUFFERED_BODY_BYTES } from '../src/upload.js';
import {
  form,
  newKey,
  packageKeys,
  packageRequest,
  postForm,
  sampleWorkflow,
  spec,
  useServer,
} from './helpers.js';

/** What the routes handed to the libraries: the request's plaintext and keys, kept to check they were zeroed. */
const seen = vi.hoisted(() => ({ bytes: [] as Uint8Array[], keys: [] as Key[] }));

vi.mock('@org/envelope-crypto', async (original) => {
  const real = await original<typeof EnvelopeCrypto>();
  return {
    ...real,
    encryptString: (plaintext: Uint8Array, recipient: Key, sender: Key) => {
      seen.bytes.push(plaintext);
      seen.keys.push(recipient, sender);
      if (Buffer.from(plaintext).toString().startsWith('fail')) throw new Error('encryption failed');
      return real.encryptString(plaintext, recipient, sender);
    },
  };
});

vi.mock('@org/workflow-compiler', async (original) => {
  const real = await original<typeof WorkflowCompiler>();
  return {
    ...real,
    validateBootstrap: (bytes: Uint8Array, options: Parameters<typeof real.validateBootstrap>[1]) => {
      seen.bytes.push(bytes);
      return real.validateBootstrap(bytes, options);
    },
    compileWorkflow: (source: Uint8Array, options: Parameters<typeof real.compileWorkflow>[1]) => {
      seen.bytes.push(source);
      return real.compileWorkflow(source, options);
    },
  };
});

vi.mock('@org/oapp-format', async (original) => {
  const real = await original<typeof OappFormat>();
  return {
    ...real,
    createPackage: (input: Parameters<typeof real.createPackage>[0]) => {
      seen.bytes.push(input.content);
      seen.keys.push(input.packagerSecretKey, ...(input.signers ?? []).map((s) => s.secretKey));
      if (input.packageId === 'fail') throw new Error('packaging failed');
      return real.createPackage(input);
    },
  };
});

const srv = useServer({ workflowBytes: 1024 * 1024, bootstrapBytes: 1024 * 1024 });

function expectAllZeroed(): void {
  expect(seen.bytes.length).toBeGreaterThan(0);
  for (const b of seen.bytes) expect(b.every((x) => x === 0)).toBe(true);
  for (const k of seen.keys) expect(k.bytes.every((x) => x === 0)).toBe(true);
}

function encryptBody() {
  const packager = newKey('packager', 'authenticated');
  const alice = newKey('alice', 'authenticated');
  return {
    keys: [spec(packager, 'secret'), spec(alice, 'public')],
    encryptionKeys: ['alice'],
    packagerIdentityPrivateKey: 'packager',
  };
}

beforeEach(() => {
  seen.bytes.length = 0;
  seen.keys.length = 0;
});

describe('plaintext and secret keys are zeroed when the request is done', () => {
  it('/string-encrypt, on success and when encryption fails', async () => {
    const ok = await postForm(`${srv.url}/string-encrypt`, form(encryptBody(), 'the secret'));
    expect(ok.status).toBe(200);
    expectAllZeroed();
    seen.bytes.length = 0;
    const failed = await postForm(`${srv.url}/string-encrypt`, form(encryptBody(), 'fail: the secret'));
    expect(failed.status).toBe(500);
    expectAllZeroed();
  });

  it.each([
    ['read whole', 100],
    ['streamed', BUFFERED_BODY_BYTES + 1],
  ])('/bootstrap-encrypt, when the bootstrap does not validate (%s)', async (_how, size) => {
    const bootstrap = JSON.stringify([{ deploymentId: 'd1', secret: 'x'.repeat(size) }]);
    const res = await postForm(`${srv.url}/bootstrap-encrypt`, form(encryptBody(), bootstrap));
    expect(res.status).toBe(422);
    expectAllZeroed();
  });

  it('/workflow-package, when the workflow does not compile and when packaging fails', async () => {
    const k = packageKeys();
    const bad = await postForm(`${srv.url}/workflow-package`, form(packageRequest(k), '{"workflows":'));
    expect(bad.status).toBe(400);
    expectAllZeroed();
    const wf = JSON.stringify(sampleWorkflow());
    const failed = await postForm(
      `${srv.url}/workflow-package`,
      form(packageRequest(packageKeys(), { packageId: 'fail' }), wf),
    );
    expect(failed.status).toBe(500);
    expect(seen.keys.length).toBe(3);
    expectAllZeroed();
  });
});
