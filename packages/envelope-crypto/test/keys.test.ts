import { beforeAll, describe, expect, it } from 'vitest';
import { ED25519_TORSION_SUBGROUP } from '@noble/curves/ed25519.js';
import {
  CryptoError,
  KEY_BYTES,
  KEY_PURPOSES,
  SIGN_SECRET_KEY_BYTES,
  assertStrongPublicKey,
  derivePublicKey,
  ed25519PublicFromSeed,
  expectKey,
  generateKeyPair,
  keyByteLength,
  keyFromBytes,
  keyToHex,
  parseKey,
  parseKeyTuple,
  x25519PublicFromSecret,
  type Key,
  type KeyPurpose,
  type KeySpec,
} from '../src/index.js';
import { hex, offsetView, thrownBy, unhex } from '@org/test-utils';
import { fill, loadSodium, sodiumRefuses } from './sodium.js';
import {
  ED25519_NON_CANONICAL,
  ED25519_OFF_CURVE,
  ED25519_SMALL_ORDER,
  X25519_SMALL_ORDER,
  le32,
} from './points.js';

let sodium: Awaited<ReturnType<typeof loadSodium>>;
beforeAll(async () => {
  sodium = await loadSodium();
});

/** Asserts that no part of `secretHex` (nor its upper-case form) leaks into the error. */
function expectNoKeyMaterial(err: unknown, secretHex: string): void {
  expect(err).toBeInstanceOf(CryptoError);
  const e = err as CryptoError;
  const text = `${e.message} ${JSON.stringify(e.details ?? {})}`;
  for (const h of [secretHex.toLowerCase(), secretHex.toUpperCase()]) {
    // Any 16-character run of the key would be a leak.
    for (let i = 0; i + 16 <= h.length; i += 8) expect(text).not.toContain(h.slice(i, i + 16));
  }
}

const signSeed = fill(32, 101);
const signPub = () => sodium.crypto_sign_seed_keypair(signSeed).publicKey;
const boxPair = () => sodium.crypto_box_seed_keypair(fill(32, 102));

describe('keyByteLength', () => {
  it('is 64 for a sign secret key and 32 otherwise', () => {
    expect(keyByteLength('sign', 'secret')).toBe(SIGN_SECRET_KEY_BYTES);
    expect(keyByteLength('sign', 'public')).toBe(KEY_BYTES);
    expect(keyByteLength('authenticated', 'secret')).toBe(32);
    expect(keyByteLength('anonymous', 'public')).toBe(32);
    expect(keyByteLength('symmetric', 'secret')).toBe(32);
  });

  it('rejects a symmetric public key with CRYPTO_BAD_KEY_SPEC', () => {
    expect(() => keyByteLength('symmetric', 'public')).toThrowCode(CryptoError, 'CRYPTO_BAD_KEY_SPEC');
  });
});

describe('parseKey', () => {
  it('parses every purpose and type in either letter case; keyToHex writes lowercase', () => {
    const kp = sodium.crypto_sign_seed_keypair(signSeed);
    const box = boxPair();
    const specs: KeySpec[] = [
      { id: 's', purpose: 'sign', type: 'secret', keyHex: hex(kp.privateKey).toUpperCase() },
      { id: 'p', purpose: 'sign', type: 'public', keyHex: hex(kp.publicKey) },
      { id: 'a', purpose: 'authenticated', type: 'public', keyHex: hex(box.publicKey).toUpperCase() },
      { id: 'b', purpose: 'authenticated', type: 'secret', keyHex: hex(box.privateKey) },
      { id: 'c', purpose: 'anonymous', type: 'public', keyHex: hex(box.publicKey) },
      { id: 'd', purpose: 'anonymous', type: 'secret', keyHex: hex(box.privateKey) },
      { id: 'e', purpose: 'symmetric', type: 'secret', keyHex: 'AB'.repeat(32) },
    ];
    for (const spec of specs) {
      const key = parseKey(spec);
      expect(key).toMatchObject({ id: spec.id, purpose: spec.purpose, type: spec.type });
      expect(keyToHex(key)).toBe(spec.keyHex.toLowerCase());
    }
  });

  it.each([
    ['purpose', { purpose: 'signing', type: 'public' }],
    ['type', { purpose: 'sign', type: 'private' }],
    ['purpose (case)', { purpose: 'Sign', type: 'public' }],
    ['symmetric public', { purpose: 'symmetric', type: 'public' }],
  ])('rejects an unknown %s with CRYPTO_BAD_KEY_SPEC', (_name, spec) => {
    expect(() => parseKey({ id: 'k', keyHex: '00'.repeat(32), ...spec })).toThrowCode(
      CryptoError,
      'CRYPTO_BAD_KEY_SPEC',
    );
  });

  it('throws TypeError for a keyHex that is not a string (caller bug)', () => {
    expect(() => parseKey({ purpose: 'sign', type: 'public', keyHex: 42 as unknown as string })).toThrow(
      TypeError,
    );
  });

  it('rejects an odd-length keyHex (63 characters) with CRYPTO_BAD_HEX naming the key id (S63)', () => {
    const keyHex = hex(boxPair().publicKey).slice(0, 63);
    const spec = { id: 'vendor', purpose: 'authenticated', type: 'public', keyHex };
    expect(() => parseKey(spec)).toThrowCode(CryptoError, 'CRYPTO_BAD_HEX');
    const err = thrownBy(() => parseKey(spec)) as CryptoError;
    expect(err.message).toContain('"vendor"');
    expect(err.details).toMatchObject({ keyId: 'vendor' });
    expectNoKeyMaterial(err, keyHex);
  });

  it('rejects a non-hex character of the right length (...0fg...) with CRYPTO_BAD_HEX (S64)', () => {
    const keyHex = `${hex(boxPair().privateKey).slice(0, 30)}0fg${hex(boxPair().privateKey).slice(33)}`;
    expect(keyHex).toHaveLength(64);
    const spec = { id: 'k9', purpose: 'authenticated', type: 'secret', keyHex };
    expect(() => parseKey(spec)).toThrowCode(CryptoError, 'CRYPTO_BAD_HEX');
    expectNoKeyMaterial(
      thrownBy(() => parseKey(spec)),
      keyHex,
    );
  });

  it.each([
    ['authenticated', 'public', 62, 64],
    ['authenticated', 'public', 66, 64],
    ['authenticated', 'secret', 62, 64],
    ['anonymous', 'public', 66, 64],
    ['symmetric', 'secret', 62, 64],
    ['sign', 'public', 66, 64],
    ['sign', 'secret', 126, 128],
    ['sign', 'secret', 130, 128],
    ['sign', 'secret', 64, 128],
  ] as const)(
    'rejects a %s %s key of %i hex characters with CRYPTO_BAD_KEY_LENGTH naming id and length (S113)',
    (purpose, type, n, expected) => {
      const material = hex(fill(65, n)).slice(0, n);
      const spec = { id: 'key-7', purpose, type, keyHex: material };
      expect(() => parseKey(spec)).toThrowCode(CryptoError, 'CRYPTO_BAD_KEY_LENGTH');
      const err = thrownBy(() => parseKey(spec)) as CryptoError;
      expect(err.message).toContain('"key-7"');
      expect(err.message).toContain(String(expected));
      expect(err.details).toMatchObject({ keyId: 'key-7', expectedHexLength: expected, actualHexLength: n });
      expectNoKeyMaterial(err, material);
    },
  );

  it('rejects a sign secret key whose public half is another key (S95) with CRYPTO_KEY_MISMATCH', () => {
    const other = sodium.crypto_sign_seed_keypair(fill(32, 999)).publicKey;
    const keyHex = hex(signSeed) + hex(other);
    const spec = { id: 'packager', purpose: 'sign', type: 'secret', keyHex };
    expect(() => parseKey(spec)).toThrowCode(CryptoError, 'CRYPTO_KEY_MISMATCH');
    const err = thrownBy(() => parseKey(spec)) as CryptoError;
    expect(err.message).toContain('"packager"');
    expect(err.details).toMatchObject({ keyId: 'packager' });
    expectNoKeyMaterial(err, keyHex);
  });

  it('rejects a sign secret key whose public half has one flipped bit with CRYPTO_KEY_MISMATCH', () => {
    const sk = sodium.crypto_sign_seed_keypair(signSeed).privateKey.slice();
    sk[63]! ^= 1;
    expect(() => parseKey({ purpose: 'sign', type: 'secret', keyHex: hex(sk) })).toThrowCode(
      CryptoError,
      'CRYPTO_KEY_MISMATCH',
    );
  });

  it.each(X25519_SMALL_ORDER.map((u) => [u.name, u.bytes] as const))(
    'rejects the small-order X25519 public key %s with CRYPTO_WEAK_KEY (S115)',
    (_name, bytes) => {
      for (const purpose of ['authenticated', 'anonymous'] as const) {
        const spec = { id: 'r1', purpose, type: 'public', keyHex: hex(bytes) };
        expect(() => parseKey(spec)).toThrowCode(CryptoError, 'CRYPTO_WEAK_KEY');
        expect((thrownBy(() => parseKey(spec)) as CryptoError).message).toContain('"r1"');
      }
    },
  );

  it('rejects a non-canonical X25519 public key (u ≥ p or top bit set) with CRYPTO_INVALID_PUBLIC_KEY', () => {
    const P = 2n ** 255n - 19n;
    const good = boxPair().publicKey.slice();
    good[31]! |= 0x80;
    for (const bytes of [le32(P + 2n), le32(P + 18n), le32(2n ** 255n - 1n), good]) {
      expect(() => parseKey({ purpose: 'authenticated', type: 'public', keyHex: hex(bytes) })).toThrowCode(
        CryptoError,
        'CRYPTO_INVALID_PUBLIC_KEY',
      );
    }
  });

  it.each(ED25519_SMALL_ORDER.map((e) => [e.name, e.bytes] as const))(
    'rejects the small-order Ed25519 signer key %s with CRYPTO_WEAK_KEY (S94)',
    (_name, bytes) => {
      expect(() => parseKey({ id: 's1', purpose: 'sign', type: 'public', keyHex: hex(bytes) })).toThrowCode(
        CryptoError,
        'CRYPTO_WEAK_KEY',
      );
    },
  );

  it('rejects the all-zero Ed25519 signer key with CRYPTO_WEAK_KEY', () => {
    expect(() => parseKey({ purpose: 'sign', type: 'public', keyHex: '00'.repeat(32) })).toThrowCode(
      CryptoError,
      'CRYPTO_WEAK_KEY',
    );
  });

  it.each(ED25519_NON_CANONICAL.map((e) => [e.name, e.bytes] as const))(
    'rejects the non-canonical Ed25519 key %s with CRYPTO_INVALID_PUBLIC_KEY',
    (_name, bytes) => {
      expect(() => parseKey({ purpose: 'sign', type: 'public', keyHex: hex(bytes) })).toThrowCode(
        CryptoError,
        'CRYPTO_INVALID_PUBLIC_KEY',
      );
    },
  );

  it('rejects an Ed25519 key that is not on the curve with CRYPTO_INVALID_PUBLIC_KEY (libsodium refuses it too)', () => {
    expect(sodiumRefuses(() => sodium.crypto_sign_ed25519_pk_to_curve25519(ED25519_OFF_CURVE))).toBe(true);
    expect(() =>
      parseKey({ id: 'off', purpose: 'sign', type: 'public', keyHex: hex(ED25519_OFF_CURVE) }),
    ).toThrowCode(CryptoError, 'CRYPTO_INVALID_PUBLIC_KEY');
  });

  it('accepts an X25519 key that libsodium accepts (the u-coordinate of any curve or twist point)', () => {
    // u = 2 is on the twist; libsodium's crypto_scalarmult accepts it, so registration does too.
    expect(sodium.crypto_scalarmult(fill(32, 5), le32(2n))).toHaveLength(32);
    expect(parseKey({ purpose: 'authenticated', type: 'public', keyHex: hex(le32(2n)) }).bytes).toEqual(
      le32(2n),
    );
  });
});

describe('assertStrongPublicKey', () => {
  it('accepts real public keys and names the key id when it rejects', () => {
    expect(() => assertStrongPublicKey('sign', signPub())).not.toThrow();
    expect(() => assertStrongPublicKey('authenticated', boxPair().publicKey)).not.toThrow();
    const err = thrownBy(() => assertStrongPublicKey('anonymous', new Uint8Array(32), 'z')) as CryptoError;
    expect(err.code).toBe('CRYPTO_WEAK_KEY');
    expect(err.message).toContain('"z"');
    expect(err.details).toEqual({ keyId: 'z' });
  });

  it('covers the whole Ed25519 torsion subgroup as published by noble', () => {
    for (const h of ED25519_TORSION_SUBGROUP) {
      expect(() => assertStrongPublicKey('sign', unhex(h))).toThrowCode(CryptoError, 'CRYPTO_WEAK_KEY');
    }
  });
});

describe('expectKey', () => {
  const keys = (): Record<string, Key> => ({
    signPub: { id: 'sp', purpose: 'sign', type: 'public', bytes: signPub() },
    authPub: { id: 'ap', purpose: 'authenticated', type: 'public', bytes: boxPair().publicKey },
    authSec: { id: 'as', purpose: 'authenticated', type: 'secret', bytes: boxPair().privateKey },
  });

  it('passes for the right purpose and type', () => {
    expect(() => expectKey(keys().authPub!, 'authenticated', 'public', 'encryptionKeys')).not.toThrow();
  });

  it.each([
    [
      'a sign key in encryptionKeys',
      'signPub',
      'authenticated',
      'public',
      'encryptionKeys',
      'CRYPTO_WRONG_KEY_PURPOSE',
    ],
    ['an authenticated key as a signer', 'authPub', 'sign', 'public', 'signers', 'CRYPTO_WRONG_KEY_PURPOSE'],
    [
      'a public key as packagerIdentityPrivateKey',
      'authPub',
      'authenticated',
      'secret',
      'packagerIdentityPrivateKey',
      'CRYPTO_WRONG_KEY_TYPE',
    ],
    [
      'a secret key as a recipient',
      'authSec',
      'authenticated',
      'public',
      'encryptionKeys',
      'CRYPTO_WRONG_KEY_TYPE',
    ],
  ] as const)(
    'rejects %s with %s, naming field and key id (S116)',
    (_name, which, purpose, type, field, code) => {
      const key = keys()[which]!;
      expect(() => expectKey(key, purpose, type, field)).toThrowCode(CryptoError, code);
      const err = thrownBy(() => expectKey(key, purpose, type, field)) as CryptoError;
      expect(err.message).toContain(field);
      expect(err.message).toContain(`"${key.id}"`);
      expect(err.details).toMatchObject({
        keyId: key.id,
        field,
        expectedPurpose: purpose,
        expectedType: type,
      });
      expectNoKeyMaterial(err, hex(key.bytes));
    },
  );
});

describe('derivePublicKey', () => {
  it('returns the stored public half of a sign secret key', () => {
    const kp = sodium.crypto_sign_seed_keypair(signSeed);
    const pub = derivePublicKey(
      parseKey({ id: 'x', purpose: 'sign', type: 'secret', keyHex: hex(kp.privateKey) }),
    );
    expect(pub).toEqual({ id: 'x', purpose: 'sign', type: 'public', bytes: kp.publicKey });
  });

  it('computes crypto_scalarmult_base for authenticated and anonymous keys', () => {
    const box = boxPair();
    for (const purpose of ['authenticated', 'anonymous'] as const) {
      const pub = derivePublicKey({ purpose, type: 'secret', bytes: box.privateKey });
      expect(pub.bytes).toEqual(box.publicKey);
      expect(pub.type).toBe('public');
      expect(pub.purpose).toBe(purpose);
    }
  });

  it('rejects a public key with CRYPTO_WRONG_KEY_TYPE', () => {
    expect(() => derivePublicKey({ purpose: 'sign', type: 'public', bytes: signPub() })).toThrowCode(
      CryptoError,
      'CRYPTO_WRONG_KEY_TYPE',
    );
  });

  it('rejects a symmetric key with CRYPTO_BAD_KEY_SPEC', () => {
    expect(() => derivePublicKey({ purpose: 'symmetric', type: 'secret', bytes: fill(32, 1) })).toThrowCode(
      CryptoError,
      'CRYPTO_BAD_KEY_SPEC',
    );
  });
});

describe('generateKeyPair', () => {
  it.each(KEY_PURPOSES.map((p) => [p]))(
    'generates a %s key pair in libsodium format',
    (purpose: KeyPurpose) => {
      const a = generateKeyPair(purpose);
      const b = generateKeyPair(purpose);
      expect(a.purpose).toBe(purpose);
      expect(a.secretKey).toMatchObject({ purpose, type: 'secret' });
      expect(a.secretKey.bytes).toHaveLength(keyByteLength(purpose, 'secret'));
      expect(a.secretKey.bytes).not.toEqual(b.secretKey.bytes);
      if (purpose === 'symmetric') {
        expect(a.publicKey).toBeNull();
        return;
      }
      expect(a.publicKey).toMatchObject({ purpose, type: 'public' });
      expect(a.publicKey!.bytes).toHaveLength(32);
      expect(derivePublicKey(a.secretKey).bytes).toEqual(a.publicKey!.bytes);
      // The generated keys pass the strict parser.
      expect(parseKey({ purpose, type: 'secret', keyHex: keyToHex(a.secretKey) }).bytes).toEqual(
        a.secretKey.bytes,
      );
      expect(parseKey({ purpose, type: 'public', keyHex: keyToHex(a.publicKey!) }).bytes).toEqual(
        a.publicKey!.bytes,
      );
      if (purpose === 'sign') {
        const ref = sodium.crypto_sign_seed_keypair(a.secretKey.bytes.subarray(0, 32));
        expect(a.secretKey.bytes).toEqual(ref.privateKey);
        expect(a.publicKey!.bytes).toEqual(ref.publicKey);
      } else {
        expect(a.publicKey!.bytes).toEqual(sodium.crypto_scalarmult_base(a.secretKey.bytes));
      }
    },
  );

  it('throws TypeError for an unknown purpose (caller bug)', () => {
    expect(() => generateKeyPair('box' as KeyPurpose)).toThrow(TypeError);
  });
});

describe('keyFromBytes', () => {
  it('runs the parseKey checks on raw bytes, including views (S118)', () => {
    const box = boxPair();
    expect(keyFromBytes('authenticated', 'public', offsetView(box.publicKey), 'v').bytes).toEqual(
      box.publicKey,
    );
    expect(() => keyFromBytes('authenticated', 'public', new Uint8Array(32))).toThrowCode(
      CryptoError,
      'CRYPTO_WEAK_KEY',
    );
    expect(() => keyFromBytes('authenticated', 'public', new Uint8Array(31))).toThrowCode(
      CryptoError,
      'CRYPTO_BAD_KEY_LENGTH',
    );
  });

  it('throws TypeError for a non-Uint8Array (caller bug)', () => {
    expect(() => keyFromBytes('sign', 'public', 'ab' as unknown as Uint8Array)).toThrow(TypeError);
  });
});

describe('ed25519PublicFromSeed / x25519PublicFromSecret', () => {
  it('match libsodium for seeds passed as views and pooled Buffers (S118)', () => {
    const seed = fill(32, 77);
    const kp = sodium.crypto_sign_seed_keypair(seed);
    expect(ed25519PublicFromSeed(offsetView(seed))).toEqual(kp.publicKey);
    expect(ed25519PublicFromSeed(Buffer.from(seed))).toEqual(kp.publicKey);
    expect(x25519PublicFromSecret(offsetView(seed))).toEqual(sodium.crypto_scalarmult_base(seed));
  });
});

describe('S176 canonical X25519 public keys: one code per defect in every entry point', () => {
  const P = 2n ** 255n - 19n;
  const withTopBit = (b: Uint8Array) => {
    const c = b.slice();
    c[31]! |= 0x80;
    return c;
  };

  it('S176 a key with bit 255 set is, for X25519, the same key (libsodium gives the same shared secret), so it is refused', () => {
    const me = boxPair();
    const peer = sodium.crypto_box_seed_keypair(fill(32, 7));
    const alias = withTopBit(peer.publicKey);
    expect(sodium.crypto_scalarmult(me.privateKey, alias)).toEqual(
      sodium.crypto_scalarmult(me.privateKey, peer.publicKey),
    );
    expect(() => assertStrongPublicKey('authenticated', alias)).toThrowCode(
      CryptoError,
      'CRYPTO_INVALID_PUBLIC_KEY',
    );
  });

  const nonCanonical = () => [
    le32(P + 2n),
    le32(P + 18n),
    le32(2n ** 255n - 1n),
    le32(2n ** 256n - 1n),
    withTopBit(boxPair().publicKey),
  ];

  it('S176 non-canonical: CRYPTO_INVALID_PUBLIC_KEY from parseKey, keyFromBytes and assertStrongPublicKey, for both X25519 purposes', () => {
    for (const bytes of nonCanonical()) {
      for (const purpose of ['authenticated', 'anonymous'] as const) {
        expect(() => parseKey({ purpose, type: 'public', keyHex: hex(bytes) })).toThrowCode(
          CryptoError,
          'CRYPTO_INVALID_PUBLIC_KEY',
        );
        expect(() => keyFromBytes(purpose, 'public', bytes)).toThrowCode(
          CryptoError,
          'CRYPTO_INVALID_PUBLIC_KEY',
        );
        expect(() => assertStrongPublicKey(purpose, bytes)).toThrowCode(
          CryptoError,
          'CRYPTO_INVALID_PUBLIC_KEY',
        );
      }
    }
  });

  it('S176 weak decides before canonical: u = p, u = p + 1 and small-order u with bit 255 set are CRYPTO_WEAK_KEY', () => {
    for (const u of X25519_SMALL_ORDER) {
      const bytes = withTopBit(u.bytes);
      expect(() => assertStrongPublicKey('authenticated', bytes), u.name).toThrowCode(
        CryptoError,
        'CRYPTO_WEAK_KEY',
      );
    }
    for (const bytes of [le32(P), le32(P + 1n)])
      expect(() => assertStrongPublicKey('authenticated', bytes)).toThrowCode(CryptoError, 'CRYPTO_WEAK_KEY');
  });

  it('S176 in a key tuple every defect is CRYPTO_BAD_KEY_TUPLE, with the key code as its cause', () => {
    for (const bytes of nonCanonical()) {
      const err = thrownBy(() => parseKeyTuple(`${hex(bytes)}/${'11'.repeat(32)}`)) as CryptoError;
      expect(err.code).toBe('CRYPTO_BAD_KEY_TUPLE');
      expect((err.cause as CryptoError).code).toBe('CRYPTO_INVALID_PUBLIC_KEY');
    }
  });

  it('S176 the largest canonical values are accepted when not weak (u = p − 2)', () => {
    expect(() => assertStrongPublicKey('authenticated', le32(P - 2n))).not.toThrow();
  });
});
