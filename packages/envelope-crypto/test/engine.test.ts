// ADR 0008: every operation that can run on libsodium takes an `engine` (default `defaultEngine()`) and gets
// libsodium only through `sodiumFor`; the engines agree byte for byte wherever the output is deterministic.
import { describe, expect, it } from 'vitest';
import {
  boxEasy,
  boxOpenEasy,
  defaultEngine,
  ed25519PublicFromSeed,
  sealedBoxOpen,
  sealedBoxSeal,
  secretboxEasy,
  secretboxOpenEasy,
  x25519PublicFromSecret,
} from '../src/index.js';
import { sodiumFor } from '../src/internal/engine.js';
import { ENGINES } from './engines.js';

const bytes = (n: number, seed: number) => Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed) & 0xff);
const key = bytes(32, 1);
const nonce = bytes(24, 2);
const message = bytes(100, 3);

describe('sodiumFor', () => {
  it('gives libsodium for the sodium engine only; sodium is the default where it loads', () => {
    expect(defaultEngine()).toBe('sodium');
    expect(sodiumFor('sodium')).toBeDefined();
    expect(sodiumFor('native')).toBeUndefined();
    expect(sodiumFor('js')).toBeUndefined();
  });
});

describe.each(ENGINES)('engine %s', (engine) => {
  it('derives the same public keys as the default engine', () => {
    expect(ed25519PublicFromSeed(key, engine)).toEqual(ed25519PublicFromSeed(key));
    expect(x25519PublicFromSecret(key, engine)).toEqual(x25519PublicFromSecret(key));
  });

  it('writes the same secretbox and crypto_box bytes as the default engine, and opens them', () => {
    const box = secretboxEasy(message, nonce, key, engine);
    expect(box).toEqual(secretboxEasy(message, nonce, key));
    expect(secretboxOpenEasy(box, nonce, key, engine)).toEqual(message);
    const a = bytes(32, 9);
    const b = bytes(32, 11);
    const sealed = boxEasy(message, nonce, x25519PublicFromSecret(b), a, engine);
    expect(sealed).toEqual(boxEasy(message, nonce, x25519PublicFromSecret(b), a));
    expect(boxOpenEasy(sealed, nonce, x25519PublicFromSecret(a), b, engine)).toEqual(message);
  });

  it('seals an anonymous box that every other engine opens', () => {
    const sk = bytes(32, 5);
    const pk = x25519PublicFromSecret(sk);
    const sealed = sealedBoxSeal(message, pk, engine);
    for (const other of ENGINES) expect(sealedBoxOpen(sealed, pk, sk, other)).toEqual(message);
  });
});
