import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encryptString, generateKeyPair, keyToHex, type KeyPair } from '@org/envelope-crypto';
import { createPackage, encryptBootstrap } from '@org/oapp-format';
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
}

/** Writes a package for `keys.deployment` to a temp file and returns its path. */
export function writePackage(dir: string, keys: TestKeys, o: PackageOptions = {}): string {
  const bytes = createPackage({
    packageId: o.packageId ?? 'echo-app',
    content: o.content ?? new TextEncoder().encode(canonicalize(o.workflow ?? echoWorkflow())),
    packagerSecretKey: (o.packager ?? keys.packager).secretKey,
    recipients: [keys.deployment.publicKey!],
    signers: (o.signers ?? [keys.author]).map((s) => ({ secretKey: s.secretKey, signText: 'release' })),
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
