import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  boxEasy,
  boxOpenEasy,
  concatBytes,
  decodeBase64,
  encodeBase64,
  encryptString,
  generateKeyPair,
  keyToHex,
  sha256,
  type KeyPair,
} from '@org/envelope-crypto';
import { createPackage, encryptBootstrap } from '@org/oapp-format';
import { keyHint } from '@org/oapp-format/internal';
import { canonicalize } from '@org/workflow-compiler';

/** Every key a test deployment needs, generated fresh. */
export interface TestKeys {
  packager: KeyPair;
  deployment: KeyPair;
  author: KeyPair;
  reviewA: KeyPair;
  reviewB: KeyPair;
  /** Opens `-2/` strings and the encrypted bootstrap. */
  agent: KeyPair;
}

export function makeKeys(): TestKeys {
  return {
    packager: generateKeyPair('authenticated'),
    deployment: generateKeyPair('authenticated'),
    author: generateKeyPair('sign'),
    reviewA: generateKeyPair('sign'),
    reviewB: generateKeyPair('sign'),
    agent: generateKeyPair('authenticated'),
  };
}

export const hex = (k: KeyPair, half: 'public' | 'secret'): string =>
  keyToHex(half === 'public' ? k.publicKey! : k.secretKey);

/** `<sender public hex>/<secret hex>` as in AGENT_BOOTSTRAP_SECRETKEY and AGENT_STRING_SECRETKEYS. */
export const tuple = (sender: KeyPair, recipient: KeyPair): string =>
  `${hex(sender, 'public')}/${hex(recipient, 'secret')}`;

export function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'agent-runtime-test-'));
}

/** A step whose urlGenerator only sets the method and the outbound URL (`hostId`, `path`). */
export const outboundCallStep = (stepId: string, method: string, hostId: string, path: string) => ({
  stepId,
  urlGenerator: { script: `context.setHttpMethod('${method}'); context.setUrl('${hostId}', '${path}');` },
});

/**
 * The outbound-policy cases (S28, S29, S42) against hosts `up` (allowed: GET v1/users/*), `nope` (undeclared)
 * and `idp` (authentication only): one call step each, and the code each refused one must fail with.
 */
export const POLICY_CALL_STEPS = [
  outboundCallStep('allowed', 'GET', 'up', 'v1/users/42'),
  outboundCallStep('refused-path', 'GET', 'up', 'v1/admin'),
  outboundCallStep('refused-method', 'DELETE', 'up', 'v1/users/42'),
  outboundCallStep('undeclared', 'GET', 'nope', 'v1/users/42'),
  outboundCallStep('auth-from-normal', 'POST', 'idp', 'token'),
];
export const POLICY_REFUSALS = [
  ['refused-path', 'POLICY_PATH_NOT_ALLOWED'],
  ['refused-method', 'POLICY_METHOD_NOT_ALLOWED'],
  ['undeclared', 'POLICY_HOST_UNKNOWN'],
  ['auth-from-normal', 'POLICY_HOST_NOT_ALLOWED'],
] as const;

/** A workflow with one HTTP-triggered echo step on server `api`. */
export function echoWorkflow(extra: object[] = []): object {
  return {
    workflows: [
      {
        name: 'echo',
        steps: [
          {
            stepId: 'echo',
            trigger: { http: { server: 'api', method: 'POST', path: '/echo' } },
            resultsProcessor: { script: "context.setBody(context.getBody() + '!')" },
          },
          ...extra,
        ],
      },
    ],
  };
}

export interface PackageOptions {
  packageId?: string;
  signers?: KeyPair[];
  packager?: KeyPair;
  workflow?: object;
  /** Package these bytes instead of the canonical (JCS) form of `workflow`, as `/workflow-package` writes it. */
  content?: Uint8Array;
  /** Release fields (format v2; default: the writer's clock-derived sequence, no expiry). */
  sequence?: number;
  createdAt?: Date;
  expiresAt?: Date | string;
  formatVersion?: 1 | 2;
}

/** Writes a package for `keys.deployment` to a temp file and returns its path. */
export function writePackage(dir: string, keys: TestKeys, o: PackageOptions = {}): string {
  const bytes = createPackage({
    packageId: o.packageId ?? 'echo-app',
    content: o.content ?? new TextEncoder().encode(canonicalize(o.workflow ?? echoWorkflow())),
    packagerSecretKey: (o.packager ?? keys.packager).secretKey,
    recipients: [keys.deployment.publicKey!],
    signers: (o.signers ?? [keys.author]).map((s) => ({ secretKey: s.secretKey, signText: 'release' })),
    sequence: o.sequence,
    createdAt: o.createdAt,
    expiresAt: o.expiresAt,
    formatVersion: o.formatVersion,
  });
  const path = join(dir, `${o.packageId ?? 'echo-app'}-${Math.random().toString(36).slice(2)}.oapp`);
  writeFileSync(path, bytes);
  return path;
}

/** A deployment record that trusts `keys.packager`, requires `author` and K of [reviewA, reviewB]. */
export function makeRecord(keys: TestKeys, remoteConfiguration: string, extra: Record<string, unknown> = {}) {
  return {
    deploymentId: 'dep-1',
    remoteConfiguration,
    packaging: {
      packageId: 'echo-app',
      packagerIdentities: ['packager'],
      requiredSigners: [{ id: 'author' }],
      additionalSigners: [{ id: 'review-a' }, { id: 'review-b' }],
      requiredAdditionalSignerCount: 0,
    },
    keys: [
      { id: 'packager', purpose: 'authenticated', type: 'public', keyHex: hex(keys.packager, 'public') },
      {
        id: 'this-deployment',
        purpose: 'authenticated',
        type: 'secret',
        keyHex: hex(keys.deployment, 'secret'),
      },
      { id: 'author', purpose: 'sign', type: 'public', keyHex: hex(keys.author, 'public') },
      { id: 'review-a', purpose: 'sign', type: 'public', keyHex: hex(keys.reviewA, 'public') },
      { id: 'review-b', purpose: 'sign', type: 'public', keyHex: hex(keys.reviewB, 'public') },
    ],
    allowHttpServerAccess: [{ id: 'api', port: 18080 }],
    ...extra,
  };
}

/** Encrypts a bootstrap for `keys.agent` from `keys.packager`. */
export function encryptedBootstrap(keys: TestKeys, bootstrap: unknown): string {
  return encryptBootstrap(new TextEncoder().encode(JSON.stringify(bootstrap)), {
    packagerSecretKey: keys.packager.secretKey,
    recipients: [keys.agent.publicKey!],
  });
}

/** A `-2/` string for `keys.agent` from `keys.packager`. */
export function encrypted(keys: TestKeys, plaintext: string): string {
  return encryptString(new TextEncoder().encode(plaintext), keys.agent.publicKey!, keys.packager.secretKey);
}

/**
 * An encrypted bootstrap forged by whoever holds the agent's bootstrap secret key (`keys.agent`), without the
 * packager's: crypto_box has no key-compromise-impersonation resistance, so X25519(agent secret, packager public)
 * is the key of a box "from" the packager. Written by `encryptBootstrap` with the agent's key pair as "packager"
 * and the packager as recipient, then the HEADER's packager and the stanza are changed so the agent's
 * AGENT_BOOTSTRAP_SECRETKEY (`tuple(keys.packager, keys.agent)`) opens it: the HEADER names the trusted packager,
 * the stanza carries the agent's hint and the digest of the new HEADER, sealed with the same shared key.
 */
export function forgeWithAgentKey(keys: TestKeys, bootstrap: unknown, signers: KeyPair[] = []): string {
  const pkg = decodeBase64(
    encryptBootstrap(new TextEncoder().encode(JSON.stringify(bootstrap)), {
      packagerSecretKey: keys.agent.secretKey,
      recipients: [keys.packager.publicKey!],
      signers: signers.map((k) => ({ secretKey: k.secretKey, signText: 'bootstrap' })),
    }),
  );
  const view = new DataView(pkg.buffer, pkg.byteOffset, pkg.byteLength);
  const headerAt = 12 + 5;
  const headerLength = view.getUint32(13);
  const headerText = new TextDecoder().decode(pkg.subarray(headerAt, headerAt + headerLength));
  const forgedHeader = new TextEncoder().encode(
    headerText.replace(hex(keys.agent, 'public'), hex(keys.packager, 'public')),
  );
  if (forgedHeader.length !== headerLength || headerText.includes(hex(keys.packager, 'public')))
    throw new Error('unexpected HEADER');
  pkg.set(forgedHeader, headerAt);
  const statementAt = headerAt + headerLength;
  const recipientsAt = statementAt + 5 + view.getUint32(statementAt + 1) + 5;
  const nonce = pkg.slice(recipientsAt + 8, recipientsAt + 32);
  const box = pkg.slice(recipientsAt + 32, recipientsAt + 112);
  const inner = boxOpenEasy(box, nonce, keys.packager.publicKey!.bytes, keys.agent.secretKey.bytes);
  const resealed = boxEasy(
    concatBytes(inner.subarray(0, 32), sha256(forgedHeader)),
    nonce,
    keys.packager.publicKey!.bytes,
    keys.agent.secretKey.bytes,
  );
  pkg.set(keyHint(keys.agent.publicKey!.bytes), recipientsAt);
  pkg.set(resealed, recipientsAt + 32);
  return encodeBase64(pkg);
}
