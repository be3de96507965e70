import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import {
  encodeHex,
  keyFromBytes,
  decodeHex,
  parseKeyTupleList,
  decryptString,
  sha256,
} from '@org/envelope-crypto';
import { byteByByte, chunked, loadNegativeCorpus } from '@org/test-utils';
import {
  decryptBootstrap,
  openEncryptedBootstrap,
  openPackage,
  policyFromBootstrap,
  trustedKey,
  verifyBootstrapSignature,
  type BootstrapAdministrators,
  type FreshnessOptions,
  type OpenPackageOptions,
} from '../src/index.js';

const here = dirname(fileURLToPath(import.meta.url));
const testdata = join(here, '..', 'testdata');
interface Index {
  keys: { id: string; purpose: 'sign' | 'authenticated'; publicKeyHex: string; secretKeyHex: string }[];
  policy: {
    packageId: string;
    packagerIdentities: string[];
    requiredSigners: string[];
    additionalSigners: string[];
    requiredAdditionalSignerCount: number;
  };
  recipient: string;
  vectors: Record<
    string,
    {
      kind: 'app' | 'bootstrap';
      contentSha256: string;
      contentSize: number;
      formatVersion: 1 | 2;
      sequence: number | null;
      createdAt: string;
      expiresAt: string | null;
    }
  >;
  bootstrap: { file: string; agentBootstrapSecretKey: string };
  string: { file: string; plaintext: string; agentStringSecretKeys: string };
  administrators: { keys: string[]; threshold: number };
  signedBootstrap: { file: string; vector: string };
  plainBootstrap: {
    file: string;
    signature: string;
    contentSha256: string;
    sequence: number;
    createdAt: string;
    expiresAt: string;
  };
  negativeInputs: Record<
    string,
    {
      minimumSequence?: number;
      freshness?: Omit<FreshnessOptions, 'now'> & { now?: string };
    }
  >;
  acceptedWithInputs: {
    file: string;
    inputs: Index['negativeInputs'][string];
    verdict?: string;
  }[];
}
const index = JSON.parse(readFileSync(join(testdata, 'vectors', 'vectors.json'), 'utf8')) as Index;
const policy = policyFromBootstrap(
  index.policy,
  index.keys.map((k) => ({ id: k.id, purpose: k.purpose, type: 'public', keyHex: k.publicKeyHex })),
);
const me = index.keys.find((k) => k.id === index.recipient)!;
const keyHex = (id: string) => index.keys.find((k) => k.id === id)!.publicKeyHex;
const administrators: BootstrapAdministrators = {
  keys: index.administrators.keys.map((id) => trustedKey(id, keyHex(id))),
  threshold: index.administrators.threshold,
};
const [bootstrapTuple] = parseKeyTupleList(index.bootstrap.agentBootstrapSecretKey);
const plainBootstrap = new Uint8Array(readFileSync(join(testdata, 'vectors', index.plainBootstrap.file)));
const options: OpenPackageOptions = {
  policy,
  recipientSecretKey: keyFromBytes('authenticated', 'secret', decodeHex(me.secretKeyHex, 32)),
};

const feeds = {
  whole: (b: Uint8Array) => b,
  'a stream of 64 KiB chunks': (b: Uint8Array) => chunked(b, 65536),
  'a stream of 7-byte chunks': (b: Uint8Array) => chunked(b, 7),
  'byte by byte': (b: Uint8Array) => byteByByte(b),
};

type Inputs = Index['negativeInputs'][string];
const freshnessOf = (inputs: Inputs): FreshnessOptions => ({
  ...inputs.freshness,
  now: inputs.freshness?.now === undefined ? undefined : new Date(inputs.freshness.now),
});

async function open(bytes: Uint8Array, feed: keyof typeof feeds, inputs?: Inputs) {
  const source = feeds[feed](bytes);
  const o: OpenPackageOptions =
    inputs === undefined
      ? options
      : {
          ...options,
          policy: { ...policy, minimumSequence: inputs.minimumSequence },
          freshness: freshnessOf(inputs),
        };
  return source instanceof Uint8Array
    ? openPackage(source, o)
    : openPackage(source as Iterable<Uint8Array>, o);
}

/** SPEC.md §14: how each kind of file is read (by its extension), with the verifier inputs vectors.json lists. */
async function read(file: string, bytes: Uint8Array, feed: keyof typeof feeds, inputs?: Inputs) {
  if (file.endsWith('.b64'))
    return openEncryptedBootstrap(new TextDecoder().decode(bytes), bootstrapTuple!, { administrators });
  if (file.endsWith('.sig')) {
    const { now, clockSkewSeconds } = freshnessOf(inputs ?? {});
    return verifyBootstrapSignature(plainBootstrap, bytes, { administrators, now, clockSkewSeconds });
  }
  return open(bytes, feed, inputs);
}

describe('valid vectors (testdata/vectors)', () => {
  for (const [name, v] of Object.entries(index.vectors).filter(([, x]) => x.kind === 'app')) {
    for (const feed of Object.keys(feeds) as (keyof typeof feeds)[]) {
      it(`opens ${name} fed ${feed} to the listed content`, async () => {
        const opened = await open(new Uint8Array(readFileSync(join(testdata, 'vectors', name))), feed);
        expect(opened.content.length).toBe(v.contentSize);
        expect(encodeHex(sha256(opened.content))).toBe(v.contentSha256);
        expect(opened.release).toEqual({
          formatVersion: v.formatVersion,
          sequence: v.sequence,
          createdAt: v.createdAt,
          expiresAt: v.expiresAt,
          verdict: v.formatVersion === 1 ? 'unversioned' : 'first',
        });
      });
    }
  }
  it('decrypts bootstrap.b64 with the AGENT_BOOTSTRAP_SECRETKEY tuple', async () => {
    const [tuple] = parseKeyTupleList(index.bootstrap.agentBootstrapSecretKey);
    const content = await decryptBootstrap(
      readFileSync(join(testdata, 'vectors', index.bootstrap.file), 'utf8'),
      tuple!,
    );
    expect(encodeHex(sha256(content))).toBe(index.vectors['bootstrap.oapp']!.contentSha256);
  });
  it('S173 opens v2-bootstrap-signed.b64 with the administrators, and verifies bootstrap.json.sig', async () => {
    const text = readFileSync(join(testdata, 'vectors', index.signedBootstrap.file), 'utf8');
    const opened = await openEncryptedBootstrap(text, bootstrapTuple!, { administrators });
    expect(encodeHex(sha256(opened.content))).toBe(
      index.vectors[index.signedBootstrap.vector]!.contentSha256,
    );
    expect(opened.signers.additional.map((s) => s.id)).toEqual(index.administrators.keys);
    expect(opened.release.sequence).toBe(index.vectors[index.signedBootstrap.vector]!.sequence);
    const sig = readFileSync(join(testdata, 'vectors', index.plainBootstrap.signature), 'utf8');
    const verified = verifyBootstrapSignature(plainBootstrap, sig, { administrators });
    expect(verified).toMatchObject({
      sequence: index.plainBootstrap.sequence,
      createdAt: index.plainBootstrap.createdAt,
      expiresAt: index.plainBootstrap.expiresAt,
    });
    expect(encodeHex(sha256(plainBootstrap))).toBe(index.plainBootstrap.contentSha256);
  });
  for (const [i, a] of index.acceptedWithInputs.entries()) {
    it(`accepts ${a.file} on a boundary of step 13a (acceptedWithInputs[${i}]: ${JSON.stringify(a.inputs)})`, async () => {
      const result = await read(
        a.file,
        new Uint8Array(readFileSync(join(testdata, 'vectors', a.file))),
        'whole',
        a.inputs,
      );
      if (a.verdict !== undefined)
        expect((result as { release: { verdict: string } }).release.verdict).toBe(a.verdict);
    });
  }
  it('decrypts string.txt with the AGENT_STRING_SECRETKEYS list', () => {
    const text = readFileSync(join(testdata, 'vectors', index.string.file), 'utf8').trim();
    expect(
      new TextDecoder().decode(decryptString(text, parseKeyTupleList(index.string.agentStringSecretKeys))),
    ).toBe(index.string.plaintext);
  });
});

describe('negative corpus (testdata/negative)', () => {
  const corpus = loadNegativeCorpus(join(testdata, 'negative'));
  it('has a case for every file name and no stray files', () => {
    expect(corpus.length).toBe(readdirSync(join(testdata, 'negative')).length);
    expect(corpus.length).toBeGreaterThan(50);
  });
  it('lists inputs only for files that exist', () => {
    for (const f of Object.keys(index.negativeInputs)) expect(corpus.map((v) => v.file)).toContain(f);
  });
  for (const v of corpus) {
    const fed = v.file.endsWith('.oapp')
      ? (Object.keys(feeds) as (keyof typeof feeds)[])
      : (['whole'] as const);
    for (const feed of fed) {
      it(`rejects ${v.file.replace(/^.*--/, '')} fed ${feed} with ${v.code}`, async () => {
        await expect(read(v.file, v.bytes, feed, index.negativeInputs[v.file])).rejects.toThrowCode(
          'OappError',
          v.code,
        );
      });
    }
  }
});

describe('generator', () => {
  const out = mkdtempSync(join(tmpdir(), 'oapp-vectors-'));
  afterAll(() => rmSync(out, { recursive: true, force: true }));
  it('regenerates every vector and negative file byte for byte (no hand edits)', () => {
    execFileSync(process.execPath, ['--import', 'tsx', join(testdata, 'generate.ts'), out], {
      stdio: 'pipe',
    });
    for (const dir of ['vectors', 'negative']) {
      const committed = readdirSync(join(testdata, dir)).sort();
      expect(readdirSync(join(out, dir)).sort()).toEqual(committed);
      for (const f of committed)
        expect(readFileSync(join(out, dir, f)).equals(readFileSync(join(testdata, dir, f))), f).toBe(true);
    }
  }, 120_000);
});
