// Request bodies of the conformance cases, as the Express service's own tests build them
// (apps/packager-api/test/helpers.ts, encrypt.test.ts, packages.test.ts): fresh keys, one request shape each.
import { generateKeyPair, keyToHex, type KeyPurpose } from '@org/envelope-crypto';

export interface TestKey {
  id: string;
  purpose: KeyPurpose;
  publicHex: string | null;
  secretHex: string;
}

/** A fresh key pair with an id. */
export function newKey(id: string, purpose: KeyPurpose): TestKey {
  const pair = generateKeyPair(purpose);
  return {
    id,
    purpose,
    publicHex: pair.publicKey === null ? null : keyToHex(pair.publicKey),
    secretHex: keyToHex(pair.secretKey),
  };
}

export interface KeySpec {
  id: string;
  purpose: KeyPurpose;
  type: 'public' | 'secret';
  keyHex: string;
}

/** The request form of a key: `{id, purpose, type, keyHex}`. */
export function spec(k: TestKey, type: 'public' | 'secret', id = k.id): KeySpec {
  return { id, purpose: k.purpose, type, keyHex: type === 'public' ? k.publicHex! : k.secretHex };
}

/** Keys for a package: a packager identity, two recipients, two signers. */
export function packageKeys() {
  return {
    packager: newKey('packager', 'authenticated'),
    alice: newKey('alice', 'authenticated'),
    bob: newKey('bob', 'authenticated'),
    author: newKey('author', 'sign'),
    ops: newKey('ops', 'sign'),
  };
}
export type PackageKeys = ReturnType<typeof packageKeys>;

/** A valid PackageRequest for {@link packageKeys}. */
export function packageRequest(k: PackageKeys, extra: Record<string, unknown> = {}) {
  return {
    packageId: 'invoice-uploader',
    keys: [
      spec(k.packager, 'secret'),
      spec(k.alice, 'public'),
      spec(k.bob, 'public'),
      spec(k.author, 'secret'),
      spec(k.ops, 'secret'),
    ],
    signers: [
      { key: 'author', signText: 'release 1.0' },
      { key: 'ops', signText: 'reviewed' },
    ],
    encryptionKeys: ['alice', 'bob'],
    packagerIdentityPrivateKey: 'packager',
    ...extra,
  };
}

/** Keys and a request body of /string-encrypt and /bootstrap-encrypt. */
export function encryptKeys() {
  const packager = newKey('packager', 'authenticated');
  const alice = newKey('alice', 'authenticated');
  const bob = newKey('bob', 'authenticated');
  const body = (encryptionKeys: string[], extra: Record<string, unknown> = {}) => ({
    keys: [spec(packager, 'secret'), spec(alice, 'public'), spec(bob, 'public')],
    encryptionKeys,
    packagerIdentityPrivateKey: 'packager',
    ...extra,
  });
  return { packager, alice, bob, body };
}

/** A /package-envelope request for a package made with `k`: opened as alice ("me"), endorsed, sent to a customer. */
export function envelopeBody(k: PackageKeys, extra: Record<string, unknown> = {}) {
  const reseller = newKey('reseller', 'authenticated');
  const customer = newKey('customer', 'authenticated');
  const review = newKey('review', 'sign');
  const body = {
    keys: [
      spec(k.alice, 'secret', 'me'),
      spec(k.packager, 'public', 'vendor'),
      spec(k.author, 'public', 'vendor-author'),
      spec(reseller, 'secret'),
      spec(customer, 'public'),
      spec(review, 'secret'),
    ],
    recipientKey: 'me',
    packaging: {
      packageId: 'invoice-uploader',
      packagerIdentities: ['vendor'],
      requiredSigners: [{ id: 'vendor-author' }],
    },
    packagerIdentityPrivateKey: 'reseller',
    encryptionKeys: ['customer'],
    signers: [{ key: 'review', signText: 'endorsed' }],
    ...extra,
  };
  return { body, reseller, customer, review };
}

/** A valid bootstrap for /bootstrap-encrypt. */
export const BOOTSTRAP = JSON.stringify([{ deploymentId: 'd1', remoteConfiguration: 'apps/x.oapp' }]);
