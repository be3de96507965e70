import {
  concatBytes,
  ed25519PublicFromSeed,
  keyFromBytes,
  sha256,
  x25519PublicFromSecret,
  type Key,
} from '@org/envelope-crypto';
import type { DeploymentPolicy, TrustedKey } from '../src/index.js';

/** Deterministic 32 bytes from a label (test keys only). */
export function seedOf(label: string): Uint8Array {
  return sha256(new TextEncoder().encode(`oapp test key ${label}`));
}

/** A test key pair with its id. */
export interface Pair {
  id: string;
  secretKey: Key;
  publicKey: Key;
}

/** A deterministic `authenticated` key pair. */
export function boxPair(label: string): Pair {
  const sk = seedOf(label);
  return {
    id: label,
    secretKey: keyFromBytes('authenticated', 'secret', sk, label),
    publicKey: keyFromBytes('authenticated', 'public', x25519PublicFromSecret(sk), label),
  };
}

/** A deterministic `sign` key pair. */
export function signPair(label: string): Pair {
  const seed = seedOf(label);
  const pk = ed25519PublicFromSeed(seed);
  return {
    id: label,
    secretKey: keyFromBytes('sign', 'secret', concatBytes(seed, pk), label),
    publicKey: keyFromBytes('sign', 'public', pk, label),
  };
}

/** A trusted-key entry for a policy. */
export function trusted(pair: { id: string; publicKey: Key }): TrustedKey {
  return { id: pair.id, publicKey: pair.publicKey.bytes };
}

export const vendorPackager = boxPair('vendor-packager');
export const customerPackager = boxPair('customer-packager');
export const customerDistribution = boxPair('customer-distribution');
export const deployment = boxPair('deployment-1');
export const otherDeployment = boxPair('deployment-2');
export const vendorSigner = signPair('vendor-signer');
export const customerSigner = signPair('customer-signer');
export const reviewerA = signPair('reviewer-a');
export const reviewerB = signPair('reviewer-b');
export const reviewerC = signPair('reviewer-c');
/** Bootstrap administrators (SPEC.md §9): they sign bootstraps, plain (`.sig`) or encrypted (records). */
export const adminA = signPair('bootstrap-admin-a');
export const adminB = signPair('bootstrap-admin-b');

export const WORKFLOW = new TextEncoder().encode(
  JSON.stringify({
    workflows: [
      { name: 'hello', steps: [{ stepId: 'hello', resultsProcessor: { script: "context.setBody('hi')" } }] },
    ],
  }),
);

/** A policy trusting the vendor packager and requiring the vendor signer. */
export function vendorPolicy(overrides: Partial<DeploymentPolicy> = {}): DeploymentPolicy {
  return {
    packageId: 'hello-app',
    packagerIdentities: [trusted(vendorPackager)],
    requiredSigners: [trusted(vendorSigner)],
    additionalSigners: [],
    requiredAdditionalSignerCount: 0,
    ...overrides,
  };
}

export const FIXED_TIME = new Date('2026-11-01T12:00:00.000Z');
