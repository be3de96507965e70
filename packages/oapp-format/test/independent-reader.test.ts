/**
 * Runs the independent, libsodium-only reader (./independent-reader.ts, written from SPEC.md alone)
 * against testdata/vectors and testdata/negative (SPEC §14).
 */
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import sodium from 'libsodium-wrappers-sumo';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  SpecReject,
  decodeHumanHex,
  decryptBootstrap,
  decryptString,
  displayForm,
  freshness,
  verifyBootstrapSignature,
  type Administrators,
  type Freshness,
  isWeakEd25519,
  isWeakX25519,
  looksLikeEncryptedBootstrap,
  openPackage,
  parseKeyTupleList,
  parsePublicKeyText,
  signingMessage,
  sodiumReady,
  toHex,
  type Kind,
  type OpenOptions,
  type Policy,
} from './independent-reader.js';

const testdata = join(dirname(fileURLToPath(import.meta.url)), '..', 'testdata');
const vectorsDir = join(testdata, 'vectors');
const negativeDir = join(testdata, 'negative');

/** The structure of testdata/vectors/vectors.json. */
interface VectorIndex {
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
      kind: Kind;
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
  plainBootstrap: { file: string; signature: string; sequence: number; createdAt: string; expiresAt: string };
  negativeInputs: Record<
    string,
    {
      minimumSequence?: number;
      freshness?: {
        newest?: { sequence: number; contentSha256: string };
        now?: string;
        clockSkewSeconds?: number;
        allowSequence?: number;
      };
    }
  >;
  acceptedWithInputs: { file: string; inputs: VectorIndex['negativeInputs'][string]; verdict?: string }[];
}

const index = JSON.parse(readFileSync(join(vectorsDir, 'vectors.json'), 'utf8')) as VectorIndex;
const readBytes = (path: string): Uint8Array => new Uint8Array(readFileSync(path));

function keyById(id: string): VectorIndex['keys'][number] {
  const key = index.keys.find((k) => k.id === id);
  if (key === undefined) throw new Error(`vectors.json names an unknown key ${id}`);
  return key;
}

const publicKey = (id: string): Uint8Array => decodeHumanHex(keyById(id).publicKeyHex, 32);

/** The deployment's policy and secret key, from vectors.json (SPEC §6, §14). */
function appOptions(): OpenOptions {
  const policy: Policy = {
    packageId: index.policy.packageId,
    packagerIdentities: index.policy.packagerIdentities.map(publicKey),
    requiredSigners: index.policy.requiredSigners.map(publicKey),
    additionalSigners: index.policy.additionalSigners.map(publicKey),
    requiredAdditionalSignerCount: index.policy.requiredAdditionalSignerCount,
  };
  const secretKey = decodeHumanHex(keyById(index.recipient).secretKeyHex, 32);
  return { policy, secretKey, expectKind: 'app', maxPlaintextSize: 64 * 1024 * 1024 };
}

/** The code the reader derives, or 'ACCEPTED' when it opens the package. */
function outcome(bytes: Uint8Array, options: OpenOptions): string {
  return codeOf(() => openPackage(bytes, options));
}

function codeOf(fn: () => unknown): string {
  try {
    fn();
    return 'ACCEPTED';
  } catch (e) {
    if (e instanceof SpecReject) return e.code;
    throw e;
  }
}

const administrators = (): Administrators => ({
  keys: index.administrators.keys.map(publicKey),
  threshold: index.administrators.threshold,
});

type Inputs = VectorIndex['negativeInputs'][string];
const freshnessOf = (inputs: Inputs): Freshness => {
  const f = inputs.freshness ?? {};
  const fresh: Freshness = { ...f, now: f.now === undefined ? undefined : new Date(f.now) };
  if (f.now === undefined) delete fresh.now;
  return fresh;
};

/** SPEC §14: a negative file is read by its extension, with the inputs vectors.json lists for it. */
function negativeOutcome(file: string): string {
  return fileOutcome(join(negativeDir, file), index.negativeInputs[file]);
}

/** The code the reader derives for a file (by its extension), or 'ACCEPTED' ('ACCEPTED <verdict>' for `.oapp`). */
function fileOutcome(file: string, inputs: Inputs | undefined, withVerdict = false): string {
  const bytes = readBytes(file);
  if (file.endsWith('.b64'))
    return codeOf(() =>
      decryptBootstrap(
        new TextDecoder().decode(bytes),
        index.bootstrap.agentBootstrapSecretKey,
        administrators(),
      ),
    );
  if (file.endsWith('.sig'))
    return codeOf(() =>
      verifyBootstrapSignature(
        readBytes(join(vectorsDir, index.plainBootstrap.file)),
        bytes,
        administrators(),
        freshnessOf(inputs ?? {}),
      ),
    );
  const o: OpenOptions =
    inputs === undefined
      ? options
      : {
          ...options,
          policy: { ...options.policy, minimumSequence: inputs.minimumSequence },
          freshness: freshnessOf(inputs),
        };
  let verdict = '';
  const code = codeOf(() => {
    verdict = openPackage(bytes, o).verdict;
  });
  return code === 'ACCEPTED' && withVerdict ? `ACCEPTED ${verdict}` : code;
}

const sha256Hex = (bytes: Uint8Array): string => toHex(sodium.crypto_hash_sha256(bytes));

/**
 * Negative files whose file-name code the SPEC-derived reader does not reproduce, with the SPEC section
 * at fault. Each is listed in the report; its agreement assertion is marked `it.fails`.
 */
const KNOWN_DISAGREEMENTS: Record<string, string> = {};

let options: OpenOptions;
beforeAll(async () => {
  await sodiumReady();
  options = appOptions();
});

describe('independent reader: valid vectors (SPEC §6, §14)', () => {
  const apps = Object.entries(index.vectors).filter(([, v]) => v.kind === 'app');

  it('vectors.json lists at least one app vector and every listed file exists', () => {
    expect(apps.length).toBeGreaterThan(0);
    const files = readdirSync(vectorsDir);
    for (const name of Object.keys(index.vectors)) expect(files).toContain(name);
  });

  for (const [name, v] of apps) {
    it(`opens ${name} to content of ${v.contentSize} bytes with SHA-256 ${v.contentSha256.slice(0, 16)}…`, () => {
      const { content, header, verdict } = openPackage(readBytes(join(vectorsDir, name)), options);
      expect(content.length).toBe(v.contentSize);
      expect(sha256Hex(content)).toBe(v.contentSha256);
      expect({
        formatVersion: header.version,
        sequence: header.sequence,
        createdAt: header.createdAt,
        expiresAt: header.expiresAt,
      }).toEqual({
        formatVersion: v.formatVersion,
        sequence: v.sequence,
        createdAt: v.createdAt,
        expiresAt: v.expiresAt,
      });
      expect(verdict).toBe(v.formatVersion === 1 ? 'unversioned' : 'first');
    });
  }

  it('S173 decrypts v2-bootstrap-signed.b64 with the administrators and verifies bootstrap.json.sig (SPEC §9)', () => {
    const text = readFileSync(join(vectorsDir, index.signedBootstrap.file), 'utf8');
    const content = decryptBootstrap(text, index.bootstrap.agentBootstrapSecretKey, administrators());
    expect(sha256Hex(content)).toBe(index.vectors[index.signedBootstrap.vector]?.contentSha256);
    const plain = readBytes(join(vectorsDir, index.plainBootstrap.file));
    const v = verifyBootstrapSignature(
      plain,
      readBytes(join(vectorsDir, index.plainBootstrap.signature)),
      administrators(),
    );
    expect(v).toEqual({
      sequence: index.plainBootstrap.sequence,
      createdAt: index.plainBootstrap.createdAt,
      expiresAt: index.plainBootstrap.expiresAt,
    });
    // Without administrators the records of the signed bootstrap are ignored (SPEC §9.1).
    expect(sha256Hex(decryptBootstrap(text, index.bootstrap.agentBootstrapSecretKey))).toBe(
      sha256Hex(content),
    );
  });

  for (const [i, a] of index.acceptedWithInputs.entries()) {
    it(`accepts ${a.file} on a boundary of step 13a (acceptedWithInputs[${i}]: ${JSON.stringify(a.inputs)})`, () => {
      const expected = a.verdict === undefined ? 'ACCEPTED' : `ACCEPTED ${a.verdict}`;
      expect(fileOutcome(join(vectorsDir, a.file), a.inputs, a.verdict !== undefined)).toBe(expected);
    });
  }

  it('S173 accepts and ignores a license in a signature file STATEMENT; checks the skew before the file (SPEC §9.2)', () => {
    const te = new TextEncoder();
    const plain = readBytes(join(vectorsDir, index.plainBootstrap.file));
    const statement = te.encode(
      JSON.stringify({
        format: 'oapp-statement/v2',
        packageId: 'bootstrap',
        sequence: 4,
        createdAt: '2026-11-01T12:00:00.000Z',
        content: {
          mediaType: 'application/vnd.oapp.bootstrap+json',
          size: plain.length,
          sha256: sha256Hex(plain),
        },
        license: { terms: 'internal use' },
      }),
    );
    const records = index.administrators.keys.map((id) => {
      const text = te.encode('ok');
      const m = signingMessage('bootstrap', statement, text, 2);
      const signature = sodium.crypto_sign_detached(m, sodium.from_hex(keyById(id).secretKeyHex));
      return Uint8Array.from([...publicKey(id), 0, text.length, ...text, ...signature]);
    });
    const b64 = (b: Uint8Array) => sodium.to_base64(b, sodium.base64_variants.ORIGINAL);
    const file = te.encode(
      JSON.stringify({
        format: 'oapp-bootstrap-signature/v1',
        statement: b64(statement),
        signatures: b64(Uint8Array.from(records.flatMap((r) => [...r]))),
      }),
    );
    expect(verifyBootstrapSignature(plain, file, administrators()).sequence).toBe(4);
    expect(
      codeOf(() =>
        verifyBootstrapSignature(plain, te.encode('x'), administrators(), { clockSkewSeconds: -1 }),
      ),
    ).toBe('POLICY_INVALID');
    expect(codeOf(() => verifyBootstrapSignature(plain, te.encode('x'), administrators()))).toBe(
      'FORMAT_JSON_INVALID',
    );
  });

  it('decrypts bootstrap.b64 with AGENT_BOOTSTRAP_SECRETKEY (SPEC §9)', () => {
    const text = readFileSync(join(vectorsDir, index.bootstrap.file), 'utf8');
    expect(looksLikeEncryptedBootstrap(text)).toBe(true);
    const content = decryptBootstrap(text, index.bootstrap.agentBootstrapSecretKey);
    const expected = index.vectors['bootstrap.oapp'];
    expect(expected).toBeDefined();
    expect(content.length).toBe(expected?.contentSize);
    expect(sha256Hex(content)).toBe(expected?.contentSha256);
  });

  it('refuses to open bootstrap.oapp as an app and a non-canonical bootstrap text (SPEC §6 step 3, §9)', () => {
    expect(outcome(readBytes(join(vectorsDir, 'bootstrap.oapp')), options)).toBe('FORMAT_WRONG_KIND');
    const text = readFileSync(join(vectorsDir, index.bootstrap.file), 'utf8').trim();
    const key = index.bootstrap.agentBootstrapSecretKey;
    expect(() => decryptBootstrap(`${text.slice(0, 40)}\n${text.slice(40)}`, key)).toThrow(
      /FORMAT_BAD_BASE64/,
    );
  });

  it('decrypts string.txt with AGENT_STRING_SECRETKEYS (SPEC §10, §11)', () => {
    // §10 does not say that a reader trims the text; the file ends with a newline, removed here by the caller.
    const text = readFileSync(join(vectorsDir, index.string.file), 'utf8').replace(/\n$/, '');
    const plaintext = decryptString(text, parseKeyTupleList(index.string.agentStringSecretKeys));
    expect(new TextDecoder('utf-8', { fatal: true }).decode(plaintext)).toBe(index.string.plaintext);
  });

  it('rejects string.txt per SPEC §10 with the wrong key, no key, or a bad prefix', () => {
    const text = readFileSync(join(vectorsDir, index.string.file), 'utf8').replace(/\n$/, '');
    const wrong = parseKeyTupleList(
      `${keyById('customer-packager').publicKeyHex}/${keyById('deployment-1').secretKeyHex}`,
    );
    expect(() => decryptString(text, wrong)).toThrow(/CRYPTO_AUTH_FAILED/);
    expect(() => decryptString(text, [])).toThrow(/CRYPTO_NO_MATCHING_KEY/);
    expect(() => decryptString(text.slice(1), wrong)).toThrow(/CRYPTO_BAD_PREFIX/);
    expect(() => decryptString(`${text}\n`, wrong)).toThrow(/CRYPTO_BAD_BASE64/);
  });
});

describe('independent reader: SPEC §2 weak-key lists agree with libsodium', () => {
  const le = (v: bigint, topBit: boolean): Uint8Array => {
    const out = new Uint8Array(32);
    for (let i = 0, x = v; i < 32; i++, x >>= 8n) out[i] = Number(x & 0xffn);
    if (topBit) out[31] = (out[31] ?? 0) | 0x80;
    return out;
  };
  const p = 2n ** 255n - 19n;

  it('every weak X25519 value gives an all-zero shared secret (libsodium refuses it)', () => {
    const sk = sodium.randombytes_buf(32);
    const weak = [0n, 1n, p - 1n, p, p + 1n];
    weak.push(325606250916557431795983626356110631294008115727848805560023387167927233504n);
    weak.push(39382357235489614581723060781553021112529911719440698176882885853963445705823n);
    for (const v of weak) {
      for (const top of [false, true]) {
        expect(isWeakX25519(le(v, top))).toBe(true);
        expect(() => sodium.crypto_scalarmult(sk, le(v, top))).toThrow();
      }
    }
    expect(isWeakX25519(sodium.crypto_scalarmult_base(sk))).toBe(false);
  });

  it('the computed weak Ed25519 y-coordinates are exactly those libsodium refuses to verify with', () => {
    const { publicKey: pk, privateKey } = sodium.crypto_sign_keypair();
    expect(isWeakEd25519(pk)).toBe(false);
    const message = Uint8Array.of(1, 2, 3);
    const signature = sodium.crypto_sign_detached(message, privateKey);
    const ys = [0n, 1n, p - 1n, p, p + 1n];
    ys.push(2707385501144840649318225287225658788936804267575313519463743609750303402022n);
    ys.push(55188659117513257062467267217118295137698188065244968500265048394206261417927n);
    for (const y of ys) {
      expect(isWeakEd25519(le(y, false))).toBe(true);
      expect(sodium.crypto_sign_verify_detached(signature, message, le(y, false))).toBe(false);
    }
    expect(isWeakEd25519(le(2n, false))).toBe(false);
  });
});

describe('independent reader: S176 public keys (SPEC §2, testdata/vectors/public-keys.json)', () => {
  const { keys } = JSON.parse(readFileSync(join(vectorsDir, 'public-keys.json'), 'utf8')) as {
    keys: { name: string; purpose: 'authenticated' | 'sign'; keyHex: string; code: string | null }[];
  };
  const codeOf = (fn: () => unknown): string | null => {
    try {
      fn();
      return null;
    } catch (e) {
      if (e instanceof SpecReject) return e.code;
      throw e;
    }
  };
  for (const k of keys) {
    it(`S176 derives ${k.code ?? 'acceptance'} for ${k.purpose} key ${k.name} as key text and in a policy`, () => {
      expect(codeOf(() => parsePublicKeyText(k.keyHex, k.purpose))).toBe(k.code);
      const pk = decodeHumanHex(k.keyHex, 32);
      const policy: Policy =
        k.purpose === 'authenticated'
          ? {
              ...options.policy,
              packagerIdentities: [
                ...options.policy.packagerIdentities.filter((x) => toHex(x) !== k.keyHex),
                pk,
              ],
            }
          : {
              ...options.policy,
              requiredSigners: [...options.policy.requiredSigners.filter((x) => toHex(x) !== k.keyHex), pk],
            };
      const app = readBytes(join(vectorsDir, 'app-minimal.oapp'));
      const expected =
        k.code ??
        (k.purpose === 'sign' && k.name !== 'vendor signer' ? 'POLICY_REQUIRED_SIGNER_MISSING' : 'ACCEPTED');
      expect(outcome(app, { ...options, policy })).toBe(expected);
    });
  }
});

describe('independent reader: S178 display form (SPEC §6.4, testdata/vectors/display.json)', () => {
  const { cases } = JSON.parse(readFileSync(join(vectorsDir, 'display.json'), 'utf8')) as {
    cases: { input: string; display: string }[];
  };
  for (const c of cases) {
    it(`S178 shows ${JSON.stringify(c.input)} as listed`, () => {
      expect(displayForm(c.input)).toBe(c.display);
    });
  }
});

describe('independent reader: negative corpus (SPEC §14)', () => {
  const files = readdirSync(negativeDir).sort();

  it('has negative files, each named <CODE>--<defect>.<oapp|b64|sig>', () => {
    expect(files.length).toBeGreaterThan(100);
    for (const f of files) expect(f).toMatch(/^[A-Z0-9_]+--[a-z0-9-]+\.(oapp|b64|sig)$/);
  });

  for (const file of files) {
    const expected = file.split('--')[0] ?? '';
    const defect = file.slice(expected.length + 2);
    it(`rejects ${defect}`, () => {
      expect(negativeOutcome(file)).not.toBe('ACCEPTED');
    });
    const agree = KNOWN_DISAGREEMENTS[file] === undefined ? it : it.fails;
    agree(`derives ${expected} for ${defect}`, () => {
      expect(negativeOutcome(file)).toBe(expected);
    });
  }
});

describe('independent reader: SPEC §6 step 13a agrees with the library on a grid of inputs', () => {
  const sha = 'cd'.repeat(32);
  const other = 'ab'.repeat(32);
  const releases = [
    { formatVersion: 1 as const, sequence: null, createdAt: '2026-11-01T12:00:00.000Z', expiresAt: null },
    ...[0, 4, 5, 6].flatMap((sequence) =>
      [null, '2026-11-02T00:00:00.000Z'].map((expiresAt) => ({
        formatVersion: 2 as const,
        sequence,
        createdAt: '2026-11-01T12:00:00.000Z',
        expiresAt,
      })),
    ),
  ];
  const floors = [undefined, 0, 5];
  const newests = [undefined, { sequence: 5, contentSha256: sha }, { sequence: 5, contentSha256: other }];
  const allows = [undefined, 4, 5];
  const clocks = [
    {},
    { now: new Date('2026-11-02T00:05:00.000Z') },
    { now: new Date('2026-11-02T00:05:00.001Z') },
    { now: new Date('2026-11-02T00:00:01.000Z'), clockSkewSeconds: 0 },
  ];
  it('gives the same verdict or code for every combination', async () => {
    const { checkFreshness, isOappError } = await import('../src/index.js');
    let n = 0;
    for (const r of releases)
      for (const floor of floors)
        for (const newest of newests)
          for (const allowSequence of allows)
            for (const clock of clocks) {
              const f = {
                ...clock,
                ...(newest ? { newest } : {}),
                ...(allowSequence === undefined ? {} : { allowSequence }),
              };
              const ours = codeOrVerdict(
                () => freshness(r, sha, floor, f),
                (e) => (e instanceof SpecReject ? e.code : undefined),
              );
              const theirs = codeOrVerdict(
                () => checkFreshness(r, sha, floor, f).verdict,
                (e) => (isOappError(e) ? e.code : undefined),
              );
              expect(ours, JSON.stringify({ r, floor, f })).toBe(theirs);
              n++;
            }
    expect(n).toBe(releases.length * floors.length * newests.length * allows.length * clocks.length);
  });
});

function codeOrVerdict(fn: () => unknown, code: (e: unknown) => string | undefined): string {
  try {
    return String(fn());
  } catch (e) {
    const c = code(e);
    if (c === undefined) throw e;
    return c;
  }
}
