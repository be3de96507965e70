// What the page computes, without the DOM: everything comes from @org/oapp-format's own functions
// (inspectPackage, verifyPackage, policyFromBootstrap); nothing of the format is re-implemented here.
import { createSha256, encodeHex, type KeySpec } from '@org/envelope-crypto';
import {
  displayText,
  inspectPackage,
  isEncryptedBootstrapText,
  parseStrictJson,
  policyFromBootstrap,
  verifyPackage,
  type DeploymentPolicy,
  type PackageInspection,
  type PackagingBlock,
} from '@org/oapp-format';

/** A failure with its library code (never a stack trace). */
export interface Failure {
  readonly code: string;
  readonly message: string;
}

/** The v2 release fields, when the library shows them (format v2; absent on v1 packages and older libraries). */
export interface ReleaseView {
  readonly formatVersion: number | null;
  readonly sequence: number | null;
  readonly expiresAt: string | null;
  readonly rollback: { readonly verdict: string; readonly code: string | null } | null;
}

/** The payload check anyone can make: the last `ciphertextBytes` bytes hash to the HEADER's `ciphertextSha256`. */
export interface PayloadCheck {
  readonly expectedSha256: string;
  readonly actualSha256: string | null;
  readonly matches: boolean;
  /** Why it could not be hashed (a file shorter than its payload), or null. */
  readonly problem: string | null;
}

/** One rule of the policy and its outcome, as `oapp verify` judges it. */
export interface RuleResult {
  readonly rule: string;
  readonly ok: boolean;
  readonly failure: Failure | null;
}

export interface PolicyVerdict {
  readonly source: string;
  readonly deploymentId: string | null;
  readonly deployments: readonly string[];
  /** Secret keys found in what was pasted: left out, never parsed. */
  readonly secretKeysIgnored: number;
  readonly accepted: boolean;
  readonly rules: readonly RuleResult[];
  /** A package or policy error that stops any rule from being judged. */
  readonly error: Failure | null;
}

export interface PageReport {
  readonly file: { readonly name: string; readonly size: number };
  readonly inspection: PackageInspection | null;
  readonly release: ReleaseView | null;
  readonly error: Failure | null;
  readonly payload: PayloadCheck | null;
  readonly policy: PolicyVerdict | null;
}

/** A byte source the page can read in pieces: a File or Blob. */
export interface ByteSource {
  readonly size: number;
  slice(start: number, end: number): { arrayBuffer(): Promise<ArrayBuffer> };
}

/** Reading is done in pieces of this size, with a pause between pieces so that the page stays responsive. */
export const PIECE_BYTES = 1 << 20;

function failureOf(err: unknown): Failure {
  if (typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string') {
    const message = 'message' in err && typeof err.message === 'string' ? err.message : err.code;
    return { code: err.code, message };
  }
  return { code: 'PAGE_INTERNAL', message: 'an unexpected error (see the browser console)' };
}

/** The source as an async iterable of pieces (only as many as the reader asks for). */
async function* pieces(
  src: ByteSource,
  start = 0,
  yieldToPage: () => Promise<void> = async () => {},
): AsyncGenerator<Uint8Array> {
  for (let off = start; off < src.size; off += PIECE_BYTES) {
    const end = Math.min(src.size, off + PIECE_BYTES);
    yield new Uint8Array(await src.slice(off, end).arrayBuffer());
    await yieldToPage();
  }
}

function releaseOf(i: PackageInspection): ReleaseView | null {
  const r = i as unknown as Record<string, unknown>;
  const num = (v: unknown) => (typeof v === 'number' ? v : null);
  const str = (v: unknown) => (typeof v === 'string' ? v : null);
  const rb = r['rollback'];
  const rollback =
    typeof rb === 'object' && rb !== null && typeof (rb as { verdict?: unknown }).verdict === 'string'
      ? {
          verdict: (rb as { verdict: string }).verdict,
          code: str((rb as { code?: unknown }).code),
        }
      : null;
  return {
    formatVersion: num(r['formatVersion']) ?? num(r['version']),
    sequence: num(r['sequence']),
    expiresAt: str(r['expiresAt']),
    rollback,
  };
}

async function checkPayload(
  src: ByteSource,
  i: PackageInspection,
  yieldToPage: () => Promise<void>,
  progress: (done: number, total: number) => void,
): Promise<PayloadCheck> {
  const expectedSha256 = i.payload.ciphertextSha256;
  const total = i.payload.ciphertextBytes;
  const start = src.size - total;
  if (start < 0) {
    return {
      expectedSha256,
      actualSha256: null,
      matches: false,
      problem: 'the file is shorter than its payload',
    };
  }
  const h = createSha256();
  let done = 0;
  for await (const p of pieces(src, start, yieldToPage)) {
    h.update(p);
    done += p.length;
    progress(done, total);
  }
  const actualSha256 = encodeHex(h.digest());
  return { expectedSha256, actualSha256, matches: actualSha256 === expectedSha256, problem: null };
}

/** What was pasted or dropped as a policy: a bootstrap (array of records), one record, or `{packaging, keys}`. */
export interface ParsedPolicy {
  readonly policy: DeploymentPolicy;
  readonly deploymentId: string | null;
  readonly deployments: readonly string[];
  readonly secretKeysIgnored: number;
}

const MAX_POLICY_BYTES = 4 << 20;

function policyError(message: string): never {
  throw Object.assign(new Error(message), { code: 'PAGE_POLICY' });
}

/**
 * Reads a plain bootstrap, one of its deployment records, or `{ packaging, keys }`, strictly, and makes the
 * deployment policy with oapp-format's `policyFromBootstrap` (the agent's own function). Secret keys are left out
 * before anything is parsed: the page never needs one. An encrypted bootstrap is refused: opening it needs a
 * secret key, which the page never asks for.
 */
export function parsePolicyText(text: string, deploymentId?: string): ParsedPolicy {
  if (isEncryptedBootstrapText(text)) {
    policyError(
      'this is an encrypted bootstrap: opening it needs a secret key, which this page never asks for; paste the plain bootstrap, or only its deployment record with the public keys',
    );
  }
  const bytes = new TextEncoder().encode(text);
  const doc = parseStrictJson(bytes, { what: 'the policy', maxBytes: MAX_POLICY_BYTES });
  const records: unknown[] = Array.isArray(doc) ? doc : [doc];
  const isObject = (v: unknown): v is Record<string, unknown> =>
    typeof v === 'object' && v !== null && !Array.isArray(v);
  const usable = records.filter((r): r is Record<string, unknown> => isObject(r) && isObject(r['packaging']));
  if (usable.length === 0) {
    policyError(
      'no deployment record with a "packaging" block (give a bootstrap, a record, or {packaging, keys})',
    );
  }
  const idOf = (r: Record<string, unknown>) =>
    typeof r['deploymentId'] === 'string' ? r['deploymentId'] : null;
  const deployments = usable.map((r) => idOf(r) ?? '(no deploymentId)');
  const record =
    deploymentId === undefined ? usable[0]! : (usable.find((r) => idOf(r) === deploymentId) ?? usable[0]!);
  const keys = Array.isArray(record['keys']) ? (record['keys'] as unknown[]) : [];
  const isSecret = (k: unknown) => isObject(k) && k['type'] === 'secret';
  const publicKeys = keys.filter((k) => !isSecret(k)) as KeySpec[];
  const policy = policyFromBootstrap(record['packaging'] as PackagingBlock, publicKeys);
  return {
    policy,
    deploymentId: idOf(record),
    deployments,
    secretKeysIgnored: keys.length - publicKeys.length,
  };
}

/**
 * Judges each rule of the policy on its own, as `oapp verify` does: `verifyPackage` itself, under a policy that
 * isolates the rule (the other rules set to what the package shows). The overall verdict is `verifyPackage` under
 * the whole policy; a refusal no single rule explains is listed as its own line.
 */
async function judge(
  open: () => AsyncIterable<Uint8Array>,
  i: PackageInspection,
  parsed: ParsedPolicy,
): Promise<{ accepted: boolean; rules: RuleResult[] }> {
  const { policy } = parsed;
  const run = (p: DeploymentPolicy) => verifyPackage(open(), { policy: p, kind: 'app' });
  const outcome = async (p: DeploymentPolicy): Promise<Failure | null> => {
    try {
      await run(p);
      return null;
    } catch (err) {
      return failureOf(err);
    }
  };
  const packagerKey = i.packager.publicKeyHex;
  const hexToBytes = (hex: string) => Uint8Array.from(hex.match(/../g) ?? [], (b) => Number.parseInt(b, 16));
  const neutral: DeploymentPolicy = {
    packageId: i.packageId,
    packagerIdentities: [{ id: 'the package packager', publicKey: hexToBytes(packagerKey) }],
    requiredSigners: [],
    additionalSigners: [],
    requiredAdditionalSignerCount: 0,
  };
  const rules: RuleResult[] = [];
  const add = async (rule: string, p: DeploymentPolicy) => {
    const failure = await outcome(p);
    rules.push({ rule, ok: failure === null, failure });
  };
  await add(`package id is ${displayText(policy.packageId)}`, { ...neutral, packageId: policy.packageId });
  await add(
    `packager is one of ${policy.packagerIdentities.map((k) => displayText(k.id)).join(', ') || 'none'}`,
    { ...neutral, packagerIdentities: policy.packagerIdentities },
  );
  for (const s of policy.requiredSigners) {
    await add(`required signer ${displayText(s.id)} signed`, { ...neutral, requiredSigners: [s] });
  }
  if (policy.additionalSigners.length > 0) {
    await add(
      `${policy.requiredAdditionalSignerCount} of ${policy.additionalSigners.length} additional signers signed`,
      {
        ...neutral,
        additionalSigners: policy.additionalSigners,
        requiredAdditionalSignerCount: policy.requiredAdditionalSignerCount,
      },
    );
  }
  const floor = (policy as unknown as { minimumSequence?: unknown }).minimumSequence;
  if (typeof floor === 'number') {
    await add(`release sequence is at least ${floor}`, { ...neutral, minimumSequence: floor });
  }
  const overall = await outcome(policy);
  if (overall !== null && !rules.some((r) => r.failure?.code === overall.code)) {
    rules.push({ rule: 'the whole policy', ok: false, failure: overall });
  }
  return { accepted: overall === null, rules };
}

export interface AnalyzeOptions {
  /** The policy text (a bootstrap, a record or {packaging, keys}), if any. */
  readonly policyText?: string | undefined;
  readonly deploymentId?: string | undefined;
  /** Called between pieces of the payload: the page awaits a macrotask so input and painting go on. */
  readonly yieldToPage?: (() => Promise<void>) | undefined;
  readonly progress?: ((done: number, total: number) => void) | undefined;
}

/** Inspects the package, checks its payload hash and, given a policy, judges it rule by rule. */
export async function analyze(
  src: ByteSource,
  name: string,
  options: AnalyzeOptions = {},
): Promise<PageReport> {
  const yieldToPage = options.yieldToPage ?? (async () => {});
  const open = () => pieces(src, 0);
  const file = { name, size: src.size };
  let parsed: ParsedPolicy | null = null;
  let policyFailure: Failure | null = null;
  if (options.policyText !== undefined && options.policyText.trim() !== '') {
    try {
      parsed = parsePolicyText(options.policyText, options.deploymentId);
    } catch (err) {
      policyFailure = failureOf(err);
    }
  }
  let inspection: PackageInspection;
  try {
    inspection = await inspectPackage(open(), parsed === null ? {} : { policy: parsed.policy });
  } catch (err) {
    return {
      file,
      inspection: null,
      release: null,
      error: failureOf(err),
      payload: null,
      policy: policyOnlyVerdict(parsed, policyFailure, failureOf(err)),
    };
  }
  const payload = await checkPayload(src, inspection, yieldToPage, options.progress ?? (() => {}));
  let policy: PolicyVerdict | null = policyOnlyVerdict(parsed, policyFailure, null);
  if (parsed !== null) {
    const { accepted, rules } = await judge(open, inspection, parsed);
    policy = { ...policy!, accepted, rules };
  }
  return { file, inspection, release: releaseOf(inspection), error: null, payload, policy };
}

function policyOnlyVerdict(
  parsed: ParsedPolicy | null,
  policyFailure: Failure | null,
  packageFailure: Failure | null,
): PolicyVerdict | null {
  if (parsed === null && policyFailure === null) return null;
  return {
    source: 'policy',
    deploymentId: parsed?.deploymentId ?? null,
    deployments: parsed?.deployments ?? [],
    secretKeysIgnored: parsed?.secretKeysIgnored ?? 0,
    accepted: false,
    rules: [],
    error: policyFailure ?? packageFailure,
  };
}
