import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash, createHmac } from 'node:crypto';
import sodiumModule from 'libsodium-wrappers';
import { REDACTED } from '../src/index.js';
import type { WorkflowEngine } from '../src/index.js';
import type { FakeHost } from './fake-host.js';
import { input } from './fake-host.js';
import { runJson, scriptEngine } from './engine-script.js';

let sodium: typeof sodiumModule;
const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const unhex = (h: string): Uint8Array => new Uint8Array(Buffer.from(h, 'hex'));
/** What `bytes().binaryToHex` gives: upper case (SPEC.md §7.1). */
const HEX = (b: Uint8Array): string => hex(b).toUpperCase();
const seed = (n: number): Uint8Array => new Uint8Array(32).fill(n);
const enc = new TextEncoder();

/** Every step reads its arguments from the JSON body and answers JSON. */
const SCRIPTS = {
  // Keys made by libsodium, used by the script; outputs for libsodium to check.
  interop: `const a = JSON.parse(context.getBody()); const c = context.crypto(); const b = context.bytes();
    const sk = c.registerKey('sign', 'secret', a.signSk), pk = c.registerKey('sign', 'public', a.signPk);
    const sym = c.registerKey('symmetric', 'secret', a.sym);
    const anonPk = c.registerKey('anonymous', 'public', a.anonPk), anonSk = c.registerKey('anonymous', 'secret', a.anonSk);
    const mine = c.registerKey('authenticated', 'secret', a.mySk), theirs = c.registerKey('authenticated', 'public', a.theirPk);
    const m = a.msg, hx = b.binaryToHex, bin = b.hexToBinary, str = (x) => b.toString(x);
    context.setBody(JSON.stringify({
      sig: hx(c.sign(m, sk)),
      verifiesSodium: c.verifySignature(bin(a.sodiumSig), m, pk),
      verifiesWithSecretKey: c.verifySignature(bin(a.sodiumSig), m, sk),
      secretbox: str(c.decrypt(bin(a.sodiumSecretbox), sym)),
      sealed: str(c.decrypt(bin(a.sodiumSealed), anonSk)),
      box: str(c.decrypt(bin(a.sodiumBox), mine, theirs)),
      ourSecretbox: hx(c.encrypt(m, sym)),
      ourSealed: hx(c.encrypt(m, anonPk)),
      ourSealedViaSecret: hx(c.encrypt(m, anonSk)),
      ourBox: hx(c.encrypt(m, theirs, mine)),
      hash: hx(c.hash(m)),
    }));`,
  generate: `const c = context.crypto();
    context.setBody(JSON.stringify(['sign', 'authenticated', 'anonymous', 'symmetric'].map((p) => c.generateKeyPair(p))));`,
  register: `const a = JSON.parse(context.getBody()); const c = context.crypto();
    try { context.setBody(JSON.stringify({ id: c.registerKey(a.purpose, a.type, a.hex) })); }
    catch (e) { context.setBody(JSON.stringify({ code: e.code || e.name, message: e.message })); }`,
  registerTwice: `const a = JSON.parse(context.getBody()); const c = context.crypto();
    context.setBody(JSON.stringify([c.registerKey('symmetric', 'secret', a.hex), c.registerKey('symmetric', 'secret', a.hex.toUpperCase())]));`,
  print: `const a = JSON.parse(context.getBody()); console.log('the key: ' + a.text); context.setBody('"logged"');`,
  verify: `const a = JSON.parse(context.getBody()); const c = context.crypto(); const b = context.bytes();
    try { context.setBody(JSON.stringify(c.verifySignature(b.hexToBinary(a.sig), a.msg, a.keyId))); }
    catch (e) { context.setBody(JSON.stringify(e.code || e.name)); }`,
  use: `const a = JSON.parse(context.getBody()); const c = context.crypto();
    const calls = { sign: () => c.sign('m', a.keyId), encrypt: () => c.encrypt('m', a.keyId, a.other), decrypt: () => c.decrypt(context.bytes().hexToBinary(a.box || ''), a.keyId, a.other) };
    try { calls[a.call](); context.setBody('"ok"'); } catch (e) { context.setBody(JSON.stringify(e.code || e.name)); }`,
  many: `const c = context.crypto(); let n = 0;
    try { for (;;) { c.registerKey('symmetric', 'secret', ('0000000' + n.toString(16)).slice(-8).repeat(8)); n++; } }
    catch (e) { context.setBody(JSON.stringify([n, e.code])); }`,
  hashes: `const a = JSON.parse(context.getBody()); const c = context.crypto(); const b = context.bytes();
    context.setBody(JSON.stringify(a.map((h) => b.binaryToHex(c.hash(b.hexToBinary(h))))));`,
  hmac: `const a = JSON.parse(context.getBody()); const c = context.crypto(); const b = context.bytes();
    context.setBody(JSON.stringify(a.map(([k, d]) => b.binaryToHex(c.hmacSha256(k.hex === undefined ? k : b.hexToBinary(k.hex), d)))));`,
  symmetric: `const a = JSON.parse(context.getBody()); const c = context.crypto(); const b = context.bytes();
    const sym = c.registerKey('symmetric', 'secret', a.key);
    context.setBody(JSON.stringify({
      ours: b.binaryToHex(c.encryptSymmetric(a.msg, sym)),
      theirs: b.toString(c.decryptSymmetric(b.hexToBinary(a.sodiumBox), sym)),
      viaDecrypt: b.toString(c.decrypt(c.encryptSymmetric(a.msg, sym), sym)),
    }));`,
  symmetricUse: `const a = JSON.parse(context.getBody()); const c = context.crypto();
    const calls = { enc: () => c.encryptSymmetric('m', a.keyId), dec: () => c.decryptSymmetric(context.bytes().hexToBinary(a.box || ''), a.keyId) };
    try { calls[a.call](); context.setBody('"ok"'); } catch (e) { context.setBody(JSON.stringify(e.code || e.name)); }`,
  misc: `const c = context.crypto(); const out = [];
    for (const f of [() => c.randomBytes(65537), () => c.generateKeyPair('signing'), () => c.randomBytes(32).length]) {
      try { out.push(f()); } catch (e) { out.push(e.code || e.name); }
    }
    context.setBody(JSON.stringify(out));`,
};

let engine: WorkflowEngine;
let host: FakeHost;
const run = (step: keyof typeof SCRIPTS, args: unknown = {}): Promise<unknown> =>
  runJson(engine, step, input(JSON.stringify(args)));
const register = async (purpose: string, type: string, keyHex: string): Promise<string> =>
  ((await run('register', { purpose, type, hex: keyHex })) as { id: string }).id;

beforeAll(async () => {
  await sodiumModule.ready;
  sodium = sodiumModule;
  ({ engine, host } = await scriptEngine(SCRIPTS));
});
afterAll(() => engine.dispose());

describe('crypto() against libsodium', () => {
  it('signs, verifies, opens and seals byte-compatibly with libsodium, both ways', async () => {
    const signKp = sodium.crypto_sign_seed_keypair(seed(1));
    const anon = sodium.crypto_box_seed_keypair(seed(2));
    const me = sodium.crypto_box_seed_keypair(seed(3));
    const them = sodium.crypto_box_seed_keypair(seed(4));
    const sym = seed(5);
    const msg = 'a message ü';
    const m = enc.encode(msg);
    const n1 = sodium.randombytes_buf(24);
    const n2 = sodium.randombytes_buf(24);
    const out = (await run('interop', {
      msg,
      signSk: hex(signKp.privateKey),
      signPk: hex(signKp.publicKey),
      sodiumSig: hex(sodium.crypto_sign_detached(m, signKp.privateKey)),
      sym: hex(sym),
      sodiumSecretbox: hex(new Uint8Array([...n1, ...sodium.crypto_secretbox_easy(m, n1, sym)])),
      anonPk: hex(anon.publicKey),
      anonSk: hex(anon.privateKey),
      sodiumSealed: hex(sodium.crypto_box_seal(m, anon.publicKey)),
      mySk: hex(me.privateKey),
      theirPk: hex(them.publicKey),
      sodiumBox: hex(
        new Uint8Array([...n2, ...sodium.crypto_box_easy(m, n2, me.publicKey, them.privateKey)]),
      ),
    })) as Record<string, string | boolean>;
    // Ed25519 is deterministic: the same bytes as crypto_sign_detached.
    expect(out.sig).toBe(HEX(sodium.crypto_sign_detached(m, signKp.privateKey)));
    expect(sodium.crypto_sign_verify_detached(unhex(out.sig as string), m, signKp.publicKey)).toBe(true);
    expect([out.verifiesSodium, out.verifiesWithSecretKey]).toEqual([true, true]);
    expect([out.secretbox, out.sealed, out.box]).toEqual([msg, msg, msg]);
    const sb = unhex(out.ourSecretbox as string);
    expect(sodium.crypto_secretbox_open_easy(sb.subarray(24), sb.subarray(0, 24), sym)).toEqual(m);
    for (const sealed of [out.ourSealed, out.ourSealedViaSecret])
      expect(sodium.crypto_box_seal_open(unhex(sealed as string), anon.publicKey, anon.privateKey)).toEqual(
        m,
      );
    const box = unhex(out.ourBox as string);
    expect(
      sodium.crypto_box_open_easy(box.subarray(24), box.subarray(0, 24), me.publicKey, them.privateKey),
    ).toEqual(m);
    // crypto_generichash with its default 32-byte output: BLAKE2b-256, not SHA-256 (ADR 0082).
    expect(out.hash).toBe(HEX(sodium.crypto_generichash(32, m, null)));
    expect(out.hash).not.toBe(createHash('sha256').update(m).digest('hex').toUpperCase());
  });

  it('generates key pairs in libsodium’s formats (hex; sign secret = seed ‖ public key; symmetric has no public key)', async () => {
    const pairs = (await run('generate')) as [string | null, string][];
    const [sign, auth, anon, sym] = pairs as [
      [string, string],
      [string, string],
      [string, string],
      [null, string],
    ];
    const kp = sodium.crypto_sign_seed_keypair(unhex(sign[1]).subarray(0, 32));
    expect([hex(kp.privateKey), hex(kp.publicKey)]).toEqual([sign[1], sign[0]]);
    for (const [pub, sec] of [auth, anon]) expect(hex(sodium.crypto_scalarmult_base(unhex(sec)))).toBe(pub);
    expect(sym[0]).toBeNull();
    expect(sym[1]).toMatch(/^[0-9a-f]{64}$/);
    // Generated secrets are secrets too.
    for (const [, sec] of pairs) expect(host.secrets).toContain(sec);
  });

  it('fails a tampered or short box with CRYPTO_AUTH_FAILED', async () => {
    const sym = await register('symmetric', 'secret', hex(seed(6)));
    const n = sodium.randombytes_buf(24);
    const good = new Uint8Array([...n, ...sodium.crypto_secretbox_easy(enc.encode('m'), n, seed(6))]);
    const bad = good.slice();
    bad[30]! ^= 1;
    for (const box of [bad, good.subarray(0, 39), new Uint8Array(0)])
      expect(await run('use', { call: 'decrypt', keyId: sym, box: hex(box) })).toBe('CRYPTO_AUTH_FAILED');
    expect(await run('use', { call: 'decrypt', keyId: sym, box: hex(good) })).toBe('ok');
  });
});

describe('crypto().hash is BLAKE2b-256 (ADR 0082)', () => {
  it('equals libsodium crypto_generichash(32, data) for empty, short, block-sized and multi-block inputs', async () => {
    const inputs = [0, 1, 3, 127, 128, 129, 1000].map((n) =>
      Uint8Array.from({ length: n }, (_, i) => (i * 31 + n) & 255),
    );
    const ours = (await run('hashes', inputs.map(hex))) as string[];
    expect(ours).toEqual(inputs.map((m) => HEX(sodium.crypto_generichash(32, m, null))));
    // BLAKE2b-256 of the empty input, fixed here so a change of both sides would still show.
    expect(ours[0]).toBe('0E5751C026E543B2E8AB2EB06099DAA1D1E5DF47778F7787FAAB45CDF12FE3A8');
  });
});

describe('crypto().hmacSha256', () => {
  it('is HMAC-SHA-256 (RFC 4231 case 2, node:crypto for bytes, text, empty and long keys) → 32 bytes', async () => {
    const long = 'k'.repeat(200); // longer than the block: hashed first
    const cases: [string | { hex: string }, string][] = [
      ['Jefe', 'what do ya want for nothing?'],
      [{ hex: '0b'.repeat(20) }, 'Hi There'],
      ['', 'no key'],
      [long, ''],
    ];
    const ours = (await run('hmac', cases)) as string[];
    expect(ours[0]).toBe('5BDCC146BF60754E6A042426089575C75A003F089D2739839DEC58B964EC3843');
    const key = (k: string | { hex: string }) => (typeof k === 'string' ? Buffer.from(k) : unhex(k.hex));
    expect(ours).toEqual(
      cases.map(([k, d]) => createHmac('sha256', key(k)).update(d).digest('hex').toUpperCase()),
    );
  });

  it('makes the key a secret: a later console.log of it shows <REDACTED>', async () => {
    await run('hmac', [['an hmac key of the script', 'data']]);
    host.logs.length = 0;
    await run('print', { text: 'an hmac key of the script' });
    expect(host.logs.map((l) => l.message)).toEqual([`the key: ${REDACTED}`]);
  });
});

describe('crypto().encryptSymmetric / decryptSymmetric', () => {
  it('are nonce(24) ‖ crypto_secretbox_easy, byte-compatible with libsodium both ways', async () => {
    const key = seed(11);
    const msg = 'symmetric ü';
    const m = enc.encode(msg);
    const n = sodium.randombytes_buf(24);
    const out = (await run('symmetric', {
      key: hex(key),
      msg,
      sodiumBox: hex(new Uint8Array([...n, ...sodium.crypto_secretbox_easy(m, n, key)])),
    })) as Record<string, string>;
    const ours = unhex(out.ours!);
    expect(ours.length).toBe(24 + 16 + m.length);
    expect(sodium.crypto_secretbox_open_easy(ours.subarray(24), ours.subarray(0, 24), key)).toEqual(m);
    expect([out.theirs, out.viaDecrypt]).toEqual([msg, msg]);
  });

  it('refuse a key of another purpose, a tampered box and an unknown key id with coded errors', async () => {
    const sym = await register('symmetric', 'secret', hex(seed(12)));
    const anon = await register('anonymous', 'secret', hex(seed(13)));
    expect(await run('symmetricUse', { call: 'enc', keyId: anon })).toBe('CRYPTO_WRONG_KEY_PURPOSE');
    expect(await run('symmetricUse', { call: 'enc', keyId: 'key-000000000000000000000000' })).toBe(
      'ENGINE_KEY_NOT_FOUND',
    );
    const n = sodium.randombytes_buf(24);
    const good = new Uint8Array([...n, ...sodium.crypto_secretbox_easy(enc.encode('m'), n, seed(12))]);
    const bad = good.slice();
    bad[30]! ^= 1;
    for (const box of [bad, good.subarray(0, 39)])
      expect(await run('symmetricUse', { call: 'dec', keyId: sym, box: hex(box) })).toBe(
        'CRYPTO_AUTH_FAILED',
      );
    expect(await run('symmetricUse', { call: 'dec', keyId: sym, box: hex(good) })).toBe('ok');
  });
});

describe('registerKey', () => {
  const secretHex = hex(seed(7));

  it('S143 refuses a wrong length, purpose, type or non-hex with a coded error that carries no key material', async () => {
    const cases: [string, string, string, string][] = [
      ['symmetric', 'secret', secretHex.slice(0, 62), 'CRYPTO_BAD_KEY_LENGTH'],
      ['symmetric', 'secret', secretHex + 'ab', 'CRYPTO_BAD_KEY_LENGTH'],
      ['signing', 'secret', secretHex, 'CRYPTO_BAD_KEY_SPEC'],
      ['sign', 'private', secretHex, 'CRYPTO_BAD_KEY_SPEC'],
      ['symmetric', 'public', secretHex, 'CRYPTO_BAD_KEY_SPEC'],
      ['symmetric', 'secret', 'zz' + secretHex.slice(2), 'CRYPTO_BAD_HEX'],
      ['sign', 'secret', secretHex + secretHex, 'CRYPTO_KEY_MISMATCH'],
      ['authenticated', 'public', '00'.repeat(32), 'CRYPTO_WEAK_KEY'],
    ];
    for (const [purpose, type, keyHex, code] of cases) {
      const out = (await run('register', { purpose, type, hex: keyHex })) as {
        code: string;
        message: string;
      };
      expect([purpose, type, out.code]).toEqual([purpose, type, code]);
      for (let i = 0; i + 16 <= secretHex.length; i += 8)
        expect(out.message).not.toContain(secretHex.slice(i, i + 16));
    }
  });

  it('returns the same id for the same key (in any letter case), a new one for another', async () => {
    const [a, b] = (await run('registerTwice', { hex: secretHex })) as [string, string];
    expect(a).toBe(b);
    expect(a).toMatch(/^key-[0-9a-f]{24}$/);
    expect(await register('symmetric', 'secret', hex(seed(8)))).not.toBe(a);
  });

  it('S144 makes a registered secret key a secret: a later console.log shows <REDACTED> for each of its forms', async () => {
    const signKp = sodium.crypto_sign_seed_keypair(seed(9));
    const sk = hex(signKp.privateKey);
    await register('sign', 'secret', sk.toUpperCase());
    const forms = [
      sk,
      sk.toUpperCase(),
      Buffer.from(signKp.privateKey).toString('base64'),
      Buffer.from(signKp.privateKey).toString('base64url'),
      sk.slice(0, 64), // the seed alone
      Buffer.from(seed(9)).toString('base64'),
    ];
    for (const text of forms) {
      host.logs.length = 0;
      await run('print', { text });
      expect(host.logs.map((l) => l.message)).toEqual([`the key: ${REDACTED}`]);
    }
    expect(host.secrets).toEqual(expect.arrayContaining(forms));
  });

  it('does not make a public key a secret', async () => {
    const pub = hex(sodium.crypto_sign_seed_keypair(seed(10)).publicKey);
    await register('sign', 'public', pub);
    host.logs.length = 0;
    await run('print', { text: pub });
    expect(host.logs.map((l) => l.message)).toEqual([`the key: ${pub}`]);
  });

  it('refuses more than 1000 keys in one deployment with ENGINE_LIMIT', { timeout: 60_000 }, async () => {
    // 1000 host calls: a time limit far from what a loaded machine could reach.
    const { engine: fresh } = await scriptEngine({ many: SCRIPTS.many }, { limits: { timeMs: 60_000 } });
    expect(await runJson(fresh, 'many', input())).toEqual([1000, 'ENGINE_LIMIT']);
    fresh.dispose();
  });
});

describe('verifySignature', () => {
  it('S145 is false for another key’s signature, a flipped bit, a truncated or padded signature', async () => {
    const a = sodium.crypto_sign_seed_keypair(seed(11));
    const b = sodium.crypto_sign_seed_keypair(seed(12));
    const msg = 'signed text';
    const keyId = await register('sign', 'public', hex(a.publicKey));
    const good = sodium.crypto_sign_detached(enc.encode(msg), a.privateKey);
    const flipped = good.slice();
    flipped[40]! ^= 1;
    expect(await run('verify', { sig: hex(good), msg, keyId })).toBe(true);
    for (const sig of [
      sodium.crypto_sign_detached(enc.encode(msg), b.privateKey),
      flipped,
      good.subarray(0, 63),
      new Uint8Array([...good, 0]),
      new Uint8Array(0),
    ])
      expect(await run('verify', { sig: hex(sig), msg, keyId })).toBe(false);
    expect(await run('verify', { sig: hex(good), msg: msg + '.', keyId })).toBe(false);
  });

  it('S145 refuses a key of another purpose with CRYPTO_WRONG_KEY_PURPOSE, never true', async () => {
    const box = sodium.crypto_box_seed_keypair(seed(13));
    const sig = sodium.crypto_sign_detached(
      enc.encode('m'),
      sodium.crypto_sign_seed_keypair(seed(13)).privateKey,
    );
    for (const [purpose, type, keyHex] of [
      ['authenticated', 'public', hex(box.publicKey)],
      ['anonymous', 'secret', hex(box.privateKey)],
      ['symmetric', 'secret', hex(seed(13))],
    ] as const) {
      const keyId = await register(purpose, type, keyHex);
      expect(await run('verify', { sig: hex(sig), msg: 'm', keyId })).toBe('CRYPTO_WRONG_KEY_PURPOSE');
    }
  });
});

describe('key purposes and types in sign / encrypt / decrypt', () => {
  it('refuses a key that does not fit the call with a coded error, a missing or extra key id with ENGINE_BAD_ARGUMENT', async () => {
    const signPub = await register(
      'sign',
      'public',
      hex(sodium.crypto_sign_seed_keypair(seed(14)).publicKey),
    );
    const boxKp = sodium.crypto_box_seed_keypair(seed(15));
    const authPub = await register('authenticated', 'public', hex(boxKp.publicKey));
    const authSec = await register('authenticated', 'secret', hex(boxKp.privateKey));
    const anonPub = await register('anonymous', 'public', hex(boxKp.publicKey));
    const sym = await register('symmetric', 'secret', hex(seed(15)));
    const cases: [Record<string, unknown>, string][] = [
      [{ call: 'sign', keyId: signPub }, 'CRYPTO_WRONG_KEY_TYPE'],
      [{ call: 'sign', keyId: sym }, 'CRYPTO_WRONG_KEY_PURPOSE'],
      [{ call: 'encrypt', keyId: signPub }, 'CRYPTO_WRONG_KEY_PURPOSE'],
      [{ call: 'encrypt', keyId: authPub }, 'ENGINE_BAD_ARGUMENT'], // no sender key id
      [{ call: 'encrypt', keyId: authPub, other: authPub }, 'CRYPTO_WRONG_KEY_TYPE'],
      [{ call: 'encrypt', keyId: authPub, other: sym }, 'CRYPTO_WRONG_KEY_PURPOSE'],
      [{ call: 'encrypt', keyId: sym, other: sym }, 'ENGINE_BAD_ARGUMENT'],
      [{ call: 'decrypt', keyId: anonPub, box: '00'.repeat(48) }, 'CRYPTO_WRONG_KEY_TYPE'],
      [{ call: 'decrypt', keyId: authSec, box: '00'.repeat(40) }, 'ENGINE_BAD_ARGUMENT'],
      [{ call: 'decrypt', keyId: signPub, box: '00' }, 'CRYPTO_WRONG_KEY_PURPOSE'],
      [{ call: 'encrypt', keyId: authPub, other: authSec }, 'ok'],
    ];
    for (const [args, code] of cases) expect([args, await run('use', args)]).toEqual([args, code]);
  });

  it('refuses randomBytes over 65 536 (ENGINE_BAD_ARGUMENT) and an unknown purpose (CRYPTO_BAD_KEY_SPEC)', async () => {
    expect(await run('misc')).toEqual(['ENGINE_BAD_ARGUMENT', 'CRYPTO_BAD_KEY_SPEC', 32]);
  });
});

describe('key scope', () => {
  it('S146 a key registered in one deployment is unknown in another (ENGINE_KEY_NOT_FOUND)', async () => {
    const { engine: other } = await scriptEngine({ use: SCRIPTS.use });
    const keyId = await register('sign', 'secret', hex(sodium.crypto_sign_seed_keypair(seed(16)).privateKey));
    expect(await run('use', { call: 'sign', keyId })).toBe('ok');
    expect(await runJson(other, 'use', input(JSON.stringify({ call: 'sign', keyId })))).toBe(
      'ENGINE_KEY_NOT_FOUND',
    );
    other.dispose();
  });
});
