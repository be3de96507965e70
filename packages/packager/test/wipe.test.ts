import type * as EnvelopeCrypto from '@org/envelope-crypto';
import type { Key } from '@org/envelope-crypto';
import type * as OappFormat from '@org/oapp-format';
import type * as WorkflowCompiler from '@org/workflow-compiler';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { BUFFERED_BODY_BYTES, createPackagerCapability, type PackagerDirs } from '../src/index.js';
import {
  encryptBody,
  form,
  makeDirs,
  newKey,
  packageKeys,
  packageRequest,
  post,
  sampleWorkflow,
  useCapabilityServer,
} from './helpers.js';

/** What the operations handed to the libraries: the request's plaintext and keys, kept to check they were zeroed. */
const seen = vi.hoisted(() => ({ bytes: [] as Uint8Array[], keys: [] as Key[] }));

vi.mock('@org/envelope-crypto', async (original) => {
  const real = await original<typeof EnvelopeCrypto>();
  return {
    ...real,
    // Every key the key ring parses.
    parseKey: (input: Parameters<typeof real.parseKey>[0]) => {
      const key = real.parseKey(input);
      seen.keys.push(key);
      return key;
    },
    encryptString: (plaintext: Uint8Array, recipient: Key, sender: Key) => {
      seen.bytes.push(plaintext);
      seen.keys.push(recipient, sender);
      if (Buffer.from(plaintext).toString().startsWith('fail')) throw new Error('encryption failed: fail…');
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

const cap = createPackagerCapability();
const dirs: PackagerDirs = makeDirs();
const srv = useCapabilityServer(
  () => cap,
  () => dirs,
);

function expectAllZeroed(): void {
  expect(seen.bytes.length).toBeGreaterThan(0);
  for (const b of seen.bytes) expect(b.every((x) => x === 0)).toBe(true);
  for (const k of seen.keys) expect(k.bytes.every((x) => x === 0)).toBe(true);
}

beforeEach(() => {
  seen.bytes.length = 0;
  seen.keys.length = 0;
});

describe('wipe() zeroes the stream part and the parsed keys', () => {
  it('string-encrypt: the plaintext and every parsed key, after a success', async () => {
    const body = encryptBody([newKey('alice', 'authenticated')]).body;
    const res = await post(`${srv.url}/string-encrypt`, form(body, 'the secret'), 'w-1');
    expect(res.status).toBe(200);
    expect(seen.keys.length).toBeGreaterThanOrEqual(2);
    expectAllZeroed();
  });

  it.each([
    ['read whole', 100],
    ['streamed', BUFFERED_BODY_BYTES + 1],
  ])('bootstrap-encrypt (%s), when the bootstrap does not validate', async (_how, size) => {
    const bootstrap = JSON.stringify([{ deploymentId: 'd1', secret: 'x'.repeat(size) }]);
    const body = encryptBody([newKey('alice', 'authenticated')]).body;
    const res = await post(`${srv.url}/bootstrap-encrypt`, form(body, bootstrap), 'w-bs');
    expect(res.status).toBe(422);
    expect(srv.phases.get('w-bs')).toBe('run');
    expectAllZeroed();
  });

  it('a held request: nothing zeroed before wipe(), everything after; run after wipe answers the generic 500', async () => {
    const { createServer } = await import('node:http');
    const held: { wipe?: () => void; run?: (id: string) => Promise<unknown> } = {};
    const server = createServer((req, res) => {
      void cap.read('string-encrypt', req, dirs).then(async (h) => {
        const answer = await h.run('held-1');
        expect(seen.bytes.some((b) => b.some((x) => x !== 0))).toBe(true);
        h.wipe();
        h.wipe(); // idempotent
        Object.assign(held, { wipe: h.wipe, run: h.run });
        res.end(String((answer as { status: number }).status));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    const res = await post(
      `http://127.0.0.1:${port}/string-encrypt`,
      form(encryptBody([newKey('alice', 'authenticated')]).body, 'the secret'),
      'held-1',
    );
    expect(await res.text()).toBe('200');
    server.close();
    expectAllZeroed();

    // A request wiped before it ran never runs with zeroed keys.
    const fresh = createServer((req, res) => {
      void cap.read('string-encrypt', req, dirs).then(async (h) => {
        h.wipe();
        const answer = await h.run('held-2');
        res.end(`${answer.status} ${answer.failure instanceof Error}`);
      });
    });
    await new Promise<void>((resolve) => fresh.listen(0, '127.0.0.1', resolve));
    const p2 = (fresh.address() as { port: number }).port;
    seen.bytes.length = 0;
    const res2 = await post(
      `http://127.0.0.1:${p2}/string-encrypt`,
      form(encryptBody([newKey('alice', 'authenticated')]).body, 'the secret'),
      'held-2',
    );
    expect(await res2.text()).toBe('500 true');
    expect(seen.bytes).toHaveLength(0);
    fresh.close();
  });

  it('workflow-package, when the workflow does not compile and when packaging fails', async () => {
    const bad = await post(
      `${srv.url}/workflow-package`,
      form(packageRequest(packageKeys()), '{"workflows":'),
      'w-2',
    );
    expect(bad.status).toBe(400);
    const failed = await post(
      `${srv.url}/workflow-package`,
      form(packageRequest(packageKeys(), { packageId: 'fail' }), JSON.stringify(sampleWorkflow())),
      'w-3',
    );
    expect(failed.status).toBe(500);
    // Five parsed keys of each request; three of the second handed to createPackage.
    expect(seen.keys).toHaveLength(13);
    expectAllZeroed();
  });
});

describe('failure is set only for an uncoded error', () => {
  it('an uncoded error: the generic 500 with failure; its message never in the body', async () => {
    const res = await post(
      `${srv.url}/string-encrypt`,
      form(encryptBody([newKey('alice', 'authenticated')]).body, 'fail: the secret'),
      'f-1',
    );
    expect(res.status).toBe(500);
    const text = await res.text();
    expect(text).not.toContain('fail');
    expect(JSON.parse(text)).toMatchObject({ code: 'INTERNAL', instance: 'urn:example:oapp:request:f-1' });
    const answer = srv.answers.get('f-1')!;
    expect(answer.failure).toBeInstanceOf(Error);
    expect(answer.headers['content-type']).toBe('application/problem+json');
    expectAllZeroed();
  });

  it('coded errors, from the read and from the run: no failure', async () => {
    const refusedRead = await post(`${srv.url}/string-encrypt`, '{}', 'f-2', {
      'content-type': 'application/json',
    });
    expect(refusedRead.status).toBe(415);
    expect(srv.answers.get('f-2')).not.toHaveProperty('failure');
    const refusedRun = await post(
      `${srv.url}/string-encrypt`,
      form({ ...encryptBody([newKey('alice', 'authenticated')]).body, encryptionKeys: ['bob'] }, 'x'),
      'f-3',
    );
    expect(refusedRun.status).toBe(422);
    expect(srv.phases.get('f-3')).toBe('run');
    expect(srv.answers.get('f-3')).not.toHaveProperty('failure');
    expect(cap.answer(new TypeError('boom'), 'f-4').failure).toBeInstanceOf(TypeError);
    expect(cap.answer(new TypeError('boom'), 'f-4')).toMatchObject({ status: 500 });
  });
});
