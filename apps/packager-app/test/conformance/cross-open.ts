// The answers that differ from request to request by design (fresh nonces, keys, creation times): packages,
// encrypted bootstraps, -2/ strings and generated keys. Both front-ends answer the same request with the same status
// and headers, and what either makes opens with the other side's tools: the oapp command line, the library
// functions (openPackage, decryptBootstrap, decryptString) and the other front-end's own endpoints.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { decryptString, parseKey, parseKeyTuple } from '@org/envelope-crypto';
import {
  decryptBootstrap,
  inspectPackage,
  openEncryptedBootstrap,
  openPackage,
  policyFromBootstrap,
} from '@org/oapp-format';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  APP,
  both,
  form,
  json,
  multipart,
  octets,
  sampleWorkflow,
  seen,
  START_MS,
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
  type KeySpec,
  type PackageKeys,
} from './fixtures.js';

const CLI = join(APP, '..', 'cli', 'dist', 'main.js');
const workflow = JSON.stringify(sampleWorkflow());

/** Runs the oapp command line with key records in variables (never a key on a command line); its stdout. */
function oapp(args: string[], keys: Record<string, KeySpec | string>): Promise<Buffer> {
  const env: Record<string, string> = { PATH: process.env['PATH'] ?? '' };
  for (const [name, value] of Object.entries(keys))
    env[name] = typeof value === 'string' ? value : JSON.stringify(value);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { env });
    const out: Buffer[] = [];
    let err = '';
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve(Buffer.concat(out)) : reject(new Error(`oapp ${args[0]} exit ${code}: ${err}`)),
    );
  });
}

/** Everything but the body, and the body's length when `sameLength`: what must agree for a fresh answer. */
function shape(s: Seen, sameLength = true) {
  const { body: _body, headers, ...rest } = s;
  const { 'x-request-id': _id, ...h } = headers;
  return { ...rest, headers: sameLength ? h : { ...h, 'content-length': undefined } };
}

/** The policy a recipient of a package made with `k` opens it under. */
function packagePolicy(k: PackageKeys) {
  return policyFromBootstrap(
    { packageId: 'invoice-uploader', packagerIdentities: ['packager'], requiredSigners: ['author', 'ops'] },
    [spec(k.packager, 'public'), spec(k.author, 'public'), spec(k.ops, 'public')],
  );
}

const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

/** Writes `bytes` to a file beside the resource directory (removed with it) and returns its path. */
function file(name: string, bytes: string | Uint8Array): string {
  const path = join(f.resources, '..', name);
  writeFileSync(path, bytes, { mode: 0o600 });
  return path;
}

describe('/workflow-package: a package from either front-end opens with the other side’s tools', () => {
  const k = packageKeys();
  const made = { express: new Uint8Array(0), agent: new Uint8Array(0) };
  let hash = '';

  beforeAll(async () => {
    const r = await both(f, 'x-package', () =>
      multipart('/workflow-package', () => form(packageRequest(k), workflow), {
        accept: 'application/octet-stream',
      }),
    );
    const [express, agent] = [await seen(r.express), await seen(r.agent)];
    expect(express.status).toBe(200);
    expect(shape(agent)).toEqual(shape(express));
    expect(express.headers['content-type']).toBe('application/octet-stream');
    made.express = Buffer.from(express.body, 'latin1');
    made.agent = Buffer.from(agent.body, 'latin1');
    // Fresh nonces and keys: the two packages differ, their content does not.
    expect(sha256(made.agent)).not.toBe(sha256(made.express));
    const h = await fetch(`${f.express}/workflow-hash`, json('/workflow-hash', workflow).init);
    hash = ((await h.json()) as { hash: string }).hash;
  }, START_MS);

  it("the agent's package opens with the oapp command line (oapp open), content hash = /workflow-hash", async () => {
    const content = await oapp(
      [
        'open',
        file('agent.oapp', made.agent),
        '-o',
        '-',
        '--key',
        'env://ALICE',
        '--package-id',
        'invoice-uploader',
        '--packager',
        'env://PACKAGER',
        '--required-signer',
        'env://AUTHOR',
        '--required-signer',
        'env://OPS',
      ],
      {
        ALICE: spec(k.alice, 'secret'),
        PACKAGER: spec(k.packager, 'public'),
        AUTHOR: spec(k.author, 'public'),
        OPS: spec(k.ops, 'public'),
      },
    );
    expect(sha256(content)).toBe(hash);
  }, 15_000);

  it("the Express service's package opens with openPackage for both recipients, the same content", async () => {
    for (const r of [k.alice, k.bob]) {
      const opened = await openPackage(made.express, {
        policy: packagePolicy(k),
        recipientSecretKey: parseKey(spec(r, 'secret')),
      });
      expect(sha256(opened.content)).toBe(hash);
      expect(opened.signers.required.map((s) => s.id)).toEqual(['author', 'ops']);
    }
  });

  it.each([
    ['the agent envelopes the Express package', 'express', 'agent'],
    ['the Express service envelopes the agent package', 'agent', 'express'],
  ] as const)('%s; the customer opens it', async (_what, maker, enveloper) => {
    const e = envelopeBody(k);
    const base = enveloper === 'agent' ? f.agent : f.express;
    const res = await fetch(`${base}/package-envelope`, {
      method: 'POST',
      body: form(e.body, made[maker]),
      headers: { accept: 'application/octet-stream' },
    });
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
    expect(sha256(opened.content)).toBe(hash);
  });

  it('each front-end inspects the other’s package: the same packager key, recipients and valid signatures', async () => {
    const inspect = async (base: string, bytes: Uint8Array) => {
      const { path, init } = octets('/workflow-inspect', bytes);
      const res = await fetch(`${base}${path}`, init);
      expect(res.status).toBe(200);
      const body = (await res.json()) as {
        packageId: string;
        packager: { publicKeyHex: string };
        recipients: unknown[];
        signatures: { signText: string; valid: boolean }[];
      };
      return {
        packageId: body.packageId,
        packager: body.packager.publicKeyHex,
        recipients: body.recipients.length,
        signatures: body.signatures.map((s) => [s.signText, s.valid]),
      };
    };
    const expected = {
      packageId: 'invoice-uploader',
      packager: k.packager.publicHex,
      recipients: 2,
      signatures: [
        ['release 1.0', true],
        ['reviewed', true],
      ],
    };
    expect(await inspect(f.express, made.agent)).toEqual(expected);
    expect(await inspect(f.agent, made.express)).toEqual(expected);
  });
});

describe('/bootstrap-encrypt: a bootstrap from either front-end decrypts with the other side’s tools', () => {
  it.each([
    ['application/octet-stream', 'x-bootstrap-octets'],
    ['text/plain', 'x-bootstrap-text'],
  ])(
    'Accept: %s',
    async (accept, id) => {
      const e = encryptKeys();
      const r = await both(f, id, () =>
        multipart('/bootstrap-encrypt', () => form(e.body(['alice', 'bob']), BOOTSTRAP), { accept }),
      );
      const [express, agent] = [await seen(r.express), await seen(r.agent)];
      expect(express.status).toBe(200);
      expect(shape(agent)).toEqual(shape(express));
      expect(agent.body).not.toBe(express.body);
      // The agent's with the command line (as an agent's operator would), the Express service's with the library.
      const decrypted = await oapp(
        ['decrypt-bootstrap', file(`${id}.txt`, agent.body), '--key-tuple', 'env://TUPLE'],
        {
          TUPLE: `${e.packager.publicHex}/${e.bob.secretHex}`,
        },
      );
      expect(JSON.parse(decrypted.toString())).toEqual(JSON.parse(BOOTSTRAP));
      const plain = await decryptBootstrap(
        express.body,
        parseKeyTuple(`${e.packager.publicHex}/${e.alice.secretHex}`),
      );
      expect(new TextDecoder().decode(plain)).toBe(BOOTSTRAP);
    },
    15_000,
  );
});

describe('issue 29: the release and the administrators’ signatures, from either front-end', () => {
  it('/workflow-package with sequence and expiresAt: both packages say the same release', async () => {
    const pk = packageKeys();
    const expiresAt = '2099-01-31T12:00:00.000Z';
    const r = await both(f, 'x-release', () =>
      multipart('/workflow-package', () => form(packageRequest(pk, { sequence: 77, expiresAt }), workflow), {
        accept: 'application/octet-stream',
      }),
    );
    const [express, agent] = [await seen(r.express), await seen(r.agent)];
    expect(express.status).toBe(200);
    expect(shape(agent)).toEqual(shape(express));
    for (const s of [express, agent]) {
      const shown = await inspectPackage(Buffer.from(s.body, 'latin1'));
      expect(shown).toMatchObject({ formatVersion: 2, sequence: 77, expiresAt });
    }
  });

  it('/workflow-inspect?newest=&now= on either front-end answers what `oapp inspect --json --newest --now` prints', async () => {
    const pk = packageKeys();
    const res = await fetch(`${f.express}/workflow-package`, {
      method: 'POST',
      body: form(packageRequest(pk, { sequence: 77, expiresAt: '2099-01-31T12:00:00.000Z' }), workflow),
    });
    expect(res.status).toBe(200);
    const bytes = new Uint8Array(await res.arrayBuffer());
    const path = file('x-inspect-query.oapp', bytes);
    const cases = [
      ['76', '2099-01-31T12:04:59Z', 'newer'],
      ['77', '2099-01-31T12:05:01Z', 'refused'],
      // The package's own sequence without a digest: `contentCompared: false` on all three.
      ['77', '2099-01-31T12:00:00Z', 'same'],
      ['78', '2099-01-31T12:00:00Z', 'refused'],
    ] as const;
    for (const [newest, now, verdict] of cases) {
      const printed = JSON.parse(
        (await oapp(['inspect', path, '--json', '--newest', newest, '--now', now], {})).toString(),
      ) as { rollback: { verdict: string } };
      expect(printed.rollback.verdict).toBe(verdict);
      for (const base of [f.express, f.agent]) {
        const { init } = octets('/workflow-inspect', bytes);
        const answer = await fetch(`${base}/workflow-inspect?newest=${newest}&now=${now}`, init);
        expect(answer.status).toBe(200);
        expect(await answer.json()).toEqual(printed);
      }
    }
  }, 20_000);

  it('/bootstrap-encrypt with signers: both bootstraps open for an agent given the administrator key', async () => {
    const e = encryptKeys();
    const admin = newKey('admin', 'sign');
    const body = {
      ...e.body(['alice']),
      keys: [...e.body(['alice']).keys, spec(admin, 'secret')],
      signers: [{ key: 'admin', signText: 'ops' }],
      sequence: 5,
    };
    const r = await both(f, 'x-bootstrap-signed', () =>
      multipart('/bootstrap-encrypt', () => form(body, BOOTSTRAP), { accept: 'text/plain' }),
    );
    const [express, agent] = [await seen(r.express), await seen(r.agent)];
    expect(express.status).toBe(200);
    expect(shape(agent)).toEqual(shape(express));
    const administrators = {
      keys: [{ id: 'admin', publicKey: parseKey(spec(admin, 'public')).bytes }],
      threshold: 1,
    };
    const tuple = parseKeyTuple(`${e.packager.publicHex}/${e.alice.secretHex}`);
    for (const s of [express, agent]) {
      const opened = await openEncryptedBootstrap(s.body, tuple, { administrators });
      expect(new TextDecoder().decode(opened.content)).toBe(BOOTSTRAP);
      expect(opened.release.sequence).toBe(5);
    }
  });
});

describe('/string-encrypt: a -2/ string from either front-end opens with decryptString', () => {
  it('the same status and headers; both open with the recipient’s key tuple, to the same plaintext', async () => {
    const e = encryptKeys();
    const r = await both(f, 'x-string', () =>
      multipart('/string-encrypt', () => form(e.body(['alice']), 's3cr3t value'), { accept: 'text/plain' }),
    );
    const [express, agent] = [await seen(r.express), await seen(r.agent)];
    expect(express.status).toBe(200);
    expect(shape(agent)).toEqual(shape(express));
    const tuple = parseKeyTuple(`${e.packager.publicHex}/${e.alice.secretHex}`);
    for (const text of [express.body, agent.body]) {
      expect(text.startsWith('-2/')).toBe(true);
      expect(new TextDecoder().decode(decryptString(text, [tuple]))).toBe('s3cr3t value');
    }
    expect(agent.body).not.toBe(express.body);
  });
});

describe('/key-gen: keys from either front-end work in the other', () => {
  it.each(['sign', 'authenticated', 'anonymous', 'symmetric', 'box', 'secretbox'])(
    'purpose=%s: the same status, headers and shape',
    async (purpose) => {
      const r = await both(f, `x-kg-${purpose}`, () => ({ path: `/key-gen?purpose=${purpose}` }));
      const [express, agent] = [await seen(r.express), await seen(r.agent)];
      expect(express.status).toBe(200);
      expect(shape(agent)).toEqual(shape(express));
      const strip = (s: Seen) => s.body.replace(/"(publicKeyHex|secretKeyHex)":"[0-9a-f]+"/g, '"$1":"<hex>"');
      expect(strip(agent)).toBe(strip(express));
      expect(agent.body).not.toBe(express.body);
    },
  );

  it("the agent's sign key signs at the Express service; the Express service's box key receives from the agent", async () => {
    const gen = async (base: string, purpose: string) =>
      (
        (await (await fetch(`${base}/key-gen?purpose=${purpose}`)).json()) as {
          keyPair: { publicKeyHex: string; secretKeyHex: string };
        }
      ).keyPair;
    const signer = await gen(f.agent, 'sign');
    const k = packageKeys();
    const req = packageRequest(k, {
      keys: [
        ...packageRequest(k).keys,
        { id: 'agent-made', purpose: 'sign', type: 'secret', keyHex: signer.secretKeyHex },
      ],
      signers: [{ key: 'agent-made', signText: 'made by the agent' }],
    });
    const pkg = await fetch(`${f.express}/workflow-package`, { method: 'POST', body: form(req, workflow) });
    expect(pkg.status).toBe(200);
    const policy = policyFromBootstrap(
      { packageId: 'invoice-uploader', packagerIdentities: ['packager'], requiredSigners: ['agent-made'] },
      [
        spec(k.packager, 'public'),
        { id: 'agent-made', purpose: 'sign', type: 'public', keyHex: signer.publicKeyHex },
      ],
    );
    const opened = await openPackage(new Uint8Array(await pkg.arrayBuffer()), {
      policy,
      recipientSecretKey: parseKey(spec(k.alice, 'secret')),
    });
    expect(opened.signers.required.map((s) => s.id)).toEqual(['agent-made']);

    const box = await gen(f.express, 'box');
    const e = encryptKeys();
    const body = e.body(['express-made'], {
      keys: [
        spec(e.packager, 'secret'),
        { id: 'express-made', purpose: 'authenticated', type: 'public', keyHex: box.publicKeyHex },
      ],
    });
    const text = await (
      await fetch(`${f.agent}/string-encrypt`, { method: 'POST', body: form(body, 'hi') })
    ).text();
    const tuple = parseKeyTuple(`${e.packager.publicHex}/${box.secretKeyHex}`);
    expect(new TextDecoder().decode(decryptString(text, [tuple]))).toBe('hi');
  });
});
