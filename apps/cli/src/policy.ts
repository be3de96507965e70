import { resolve } from 'node:path';
import { decodeHex, parseKey, type Key } from '@org/envelope-crypto';
import {
  decryptBootstrap,
  inspectPackage,
  isEncryptedBootstrapText,
  MAX_BOOTSTRAP_BYTES,
  policyFromBootstrap,
  validatePolicy,
  verifyPackage,
  type DeploymentPolicy,
  type FreshnessOptions,
  type TrustedKey,
  type VerifiedPackage,
} from '@org/oapp-format';
import { validateBootstrap, type Bootstrap, type DeploymentRecord } from '@org/workflow-compiler';
import { asUsage, CliError, describeError, EXIT_USAGE, isCodedError } from './errors.js';
import { readInput, type Input } from './io.js';
import { ENV_SCHEME, loadKeys, loadKeyTuple, type Env } from './keys.js';

/** The verification-policy options shared by `verify`, `open` and `envelope`. */
export interface PolicyFlags {
  readonly bootstrap?: string | undefined;
  readonly deployment?: string | undefined;
  readonly bootstrapKey?: string | undefined;
  readonly packageId?: string | undefined;
  readonly packager: readonly string[];
  readonly requiredSigner: readonly string[];
  readonly additionalSigner: readonly string[];
  readonly threshold?: string | undefined;
}

/** A deployment policy and what the bootstrap record adds to it. */
export interface ResolvedPolicy {
  readonly policy: DeploymentPolicy;
  /** The record's own `authenticated` secret key (the agent's rule: exactly one such key), if it has one. */
  readonly deploymentKey?: Key | undefined;
  /** The record's `remoteConfiguration`, resolved against the working directory (as the agent does). */
  readonly packagePath?: string | undefined;
  readonly deploymentId?: string | undefined;
}

/** The variable `--bootstrap` reads an encrypted bootstrap's key tuple from by default (as the agent). */
export const DEFAULT_BOOTSTRAP_KEY = `${ENV_SCHEME}AGENT_BOOTSTRAP_SECRETKEY`;

const usage = (message: string) => new CliError('CLI_USAGE', message, EXIT_USAGE);
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Reads a bootstrap (plain JSON, or the encrypted Base64 text opened with a key tuple), validated and normalised
 * by workflow-compiler exactly as the agent does.
 * @throws {@link CliError} usage errors with the library code (`WORKFLOW_BOOTSTRAP_*`, `FORMAT_*`, `CRYPTO_*`).
 */
export async function loadBootstrap(
  path: string,
  keySource: string | undefined,
  env: Env,
  warn: (m: string) => void,
): Promise<Bootstrap> {
  const bytes = await readInput(path, MAX_BOOTSTRAP_BYTES * 2);
  const where = `--bootstrap ${path}`;
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw new CliError('CLI_USAGE', `${where}: not UTF-8 text`);
  }
  let plain: Uint8Array | string = text;
  if (isEncryptedBootstrapText(text)) {
    const tuple = await loadKeyTuple(keySource ?? DEFAULT_BOOTSTRAP_KEY, '--bootstrap-key', env, warn);
    plain = await asUsage(where, () => decryptBootstrap(text, tuple));
  }
  return asUsage(where, () => validateBootstrap(plain, { maxBytes: MAX_BOOTSTRAP_BYTES }));
}

function pickRecord(bootstrap: Bootstrap, id: string | undefined, where: string): DeploymentRecord {
  const ids = bootstrap.map((r) => `"${r.deploymentId}"`).join(', ');
  if (id === undefined) {
    if (bootstrap.length === 1) return bootstrap[0]!;
    throw new CliError(
      'CLI_DEPLOYMENT',
      `${where} has ${bootstrap.length} deployments (${ids}): pick one with --deployment`,
    );
  }
  const record = bootstrap.find((r) => r.deploymentId === id);
  if (record === undefined)
    throw new CliError('CLI_DEPLOYMENT', `${where} has no deployment "${id}" (it has ${ids})`);
  return record;
}

async function fromBootstrap(
  flags: PolicyFlags,
  env: Env,
  warn: (m: string) => void,
): Promise<ResolvedPolicy> {
  const path = flags.bootstrap!;
  const where = `--bootstrap ${path}`;
  const record = pickRecord(
    await loadBootstrap(path, flags.bootstrapKey, env, warn),
    flags.deployment,
    where,
  );
  const context = `${where}, deployment "${record.deploymentId}"`;
  if (record.packaging === undefined) {
    throw new CliError(
      'CLI_DEPLOYMENT',
      `${context}: no packaging block, so no package policy to verify against`,
    );
  }
  const keys = record.keys ?? [];
  // oapp-format's own bootstrap → policy function, the one the agent uses.
  const policy = await asUsage(context, () => policyFromBootstrap(record.packaging!, keys));
  const own = keys.filter((k) => k.purpose === 'authenticated' && k.type === 'secret');
  const deploymentKey = own.length === 1 ? await asUsage(context, () => parseKey(own[0]!)) : undefined;
  return {
    policy,
    deploymentKey,
    packagePath: resolve(record.remoteConfiguration),
    deploymentId: record.deploymentId,
  };
}

function threshold(raw: string | undefined): number {
  if (raw === undefined) return 0;
  if (!/^[0-9]{1,6}$/.test(raw)) throw usage(`--threshold must be a non-negative integer`);
  return Number(raw);
}

async function fromFlags(flags: PolicyFlags, env: Env, warn: (m: string) => void): Promise<ResolvedPolicy> {
  if (flags.packageId === undefined)
    throw usage('give the policy: --bootstrap FILE, or --package-id ID with --packager KEYFILE');
  if (flags.packager.length === 0) throw usage('--packager KEYFILE is required with --package-id');
  const trusted = async (srcs: readonly string[], purpose: 'sign' | 'authenticated', flag: string) =>
    (await loadKeys(srcs, { purpose, type: 'public' }, flag, env, warn)).map((k): TrustedKey => ({
      id: k.id,
      publicKey: k.key.bytes,
    }));
  const policy: DeploymentPolicy = {
    packageId: flags.packageId,
    packagerIdentities: await trusted(flags.packager, 'authenticated', '--packager'),
    requiredSigners: await trusted(flags.requiredSigner, 'sign', '--required-signer'),
    additionalSigners: await trusted(flags.additionalSigner, 'sign', '--additional-signer'),
    requiredAdditionalSignerCount: threshold(flags.threshold),
  };
  await asUsage('the policy given by the options', () => validatePolicy(policy));
  return { policy };
}

/**
 * The deployment policy from `--bootstrap FILE [--deployment ID]` or from the policy flags (never both).
 * @throws {@link CliError} usage errors (exit 2).
 */
export async function resolvePolicy(
  flags: PolicyFlags,
  env: Env,
  warn: (m: string) => void,
): Promise<ResolvedPolicy> {
  const flagged =
    flags.packageId !== undefined ||
    flags.packager.length > 0 ||
    flags.requiredSigner.length > 0 ||
    flags.additionalSigner.length > 0 ||
    flags.threshold !== undefined;
  if (flags.bootstrap !== undefined) {
    if (flagged)
      throw usage('--bootstrap and the policy options (--package-id, --packager, …) exclude each other');
    return fromBootstrap(flags, env, warn);
  }
  if (flags.deployment !== undefined || flags.bootstrapKey !== undefined)
    throw usage('--deployment and --bootstrap-key need --bootstrap');
  return fromFlags(flags, env, warn);
}

/** One failed policy rule. */
export interface RuleFailure {
  readonly code: string;
  readonly message: string;
}

/** The outcome of {@link checkPolicy}: the verified package, or every rule it fails. */
export type PolicyReport =
  | { readonly ok: true; readonly verified: VerifiedPackage }
  | { readonly ok: false; readonly failures: readonly RuleFailure[] };

const RULE_CODES = new Set([
  'POLICY_PACKAGE_ID_MISMATCH',
  'POLICY_PACKAGER_NOT_TRUSTED',
  'POLICY_SIGNATURE_INVALID',
  'POLICY_REQUIRED_SIGNER_MISSING',
  'POLICY_SIGNER_THRESHOLD_NOT_MET',
  // The freshness check (oapp-format SPEC.md §6 step 13a): the floor, the remembered newest, the expiry.
  'POLICY_BELOW_MINIMUM',
  'POLICY_ROLLBACK',
  'POLICY_SEQUENCE_REUSED',
  'POLICY_EXPIRED',
]);

/**
 * Verifies a package against a policy (oapp-format `verifyPackage`, no decryption) and, when a policy rule fails,
 * reports every failed rule, not just the first: each rule is re-judged by `verifyPackage` itself under a
 * policy that isolates it (the other rules set to what the package shows), so no rule is re-implemented here.
 * The freshness rules (the policy's floor, `freshness.newest`, the expiry) are judged together, as one more rule.
 * Format and crypto errors (nothing further can be judged) are thrown.
 * @throws `FORMAT_*`, `CRYPTO_*`, `POLICY_INVALID` from oapp-format.
 */
export async function checkPolicy(
  input: Input,
  policy: DeploymentPolicy,
  freshness?: FreshnessOptions,
): Promise<PolicyReport> {
  const run = (p: DeploymentPolicy, f?: FreshnessOptions) =>
    verifyPackage(input.open(), { policy: p, kind: 'app', freshness: f });
  let first: unknown;
  try {
    return { ok: true, verified: await run(policy, freshness) };
  } catch (err) {
    if (!isCodedError(err) || !RULE_CODES.has(err.code)) throw err;
    first = err;
  }
  const shown = await inspectPackage(input.open());
  const neutral: DeploymentPolicy = {
    packageId: shown.packageId,
    packagerIdentities: [
      { id: 'the package packager', publicKey: decodeHex(shown.packager.publicKeyHex, 32) },
    ],
    requiredSigners: [],
    additionalSigners: [],
    requiredAdditionalSignerCount: 0,
    // The expiry is checked under every policy: with the caller's clock and skew, it is one rule, not one per attempt.
    clockSkewSeconds: policy.clockSkewSeconds,
  };
  const clock: FreshnessOptions = { now: freshness?.now };
  const failures: RuleFailure[] = [];
  const add = (f: RuleFailure) => {
    if (!failures.some((x) => x.code === f.code && x.message === f.message)) failures.push(f);
  };
  const attempt = async (
    p: DeploymentPolicy,
    f: FreshnessOptions = clock,
  ): Promise<VerifiedPackage | undefined> => {
    try {
      return await run(p, f);
    } catch (err) {
      if (!isCodedError(err)) throw err;
      add(describeError(err));
      return undefined;
    }
  };
  await attempt({ ...neutral, packageId: policy.packageId });
  const { minimumSequence, allowDowngradeTo } = policy;
  await attempt({ ...neutral, minimumSequence, allowDowngradeTo }, freshness);
  await attempt({ ...neutral, packagerIdentities: policy.packagerIdentities });
  for (const s of policy.requiredSigners) await attempt({ ...neutral, requiredSigners: [s] });
  const usable: TrustedKey[] = [];
  for (const a of policy.additionalSigners) {
    if ((await attempt({ ...neutral, additionalSigners: [a] })) !== undefined) usable.push(a);
  }
  const k = policy.requiredAdditionalSignerCount;
  if (k > usable.length) {
    // Some additional signatures are invalid (reported above); the rest cannot reach K.
    const v = await attempt({ ...neutral, additionalSigners: usable });
    add({
      code: 'POLICY_SIGNER_THRESHOLD_NOT_MET',
      message: `${v?.signers.additional.length ?? usable.length} of ${k} required additional signatures found`,
    });
  } else if (k > 0) {
    await attempt({ ...neutral, additionalSigners: usable, requiredAdditionalSignerCount: k });
  }
  if (failures.length === 0) add(describeError(first));
  return { ok: false, failures };
}
