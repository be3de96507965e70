import type { Key } from '@org/envelope-crypto';
import {
  checkFreshness,
  inspectPackage,
  isOappError,
  repackage,
  type DeploymentPolicy,
  type PackageInspection,
  type RollbackVerdict,
  type TrustedKey,
} from '@org/oapp-format';
import { checkedBody } from '../body-json.js';
import { packageEnvelopeRequest } from '../generated/validators.js';
import type { InspectFreshness } from '../inspect-query.js';
import { resolvePackager, resolveRecipients, resolveSigners, type Keyring } from '../keyring.js';
import { OCTET_STREAM } from '../negotiate.js';
import { jsonResult } from '../internal/json-result.js';
import type { KeyedForm, OperationResult } from '../operation.js';
import { type PackageEnvelopeRequest, type SignerRef } from '../request-schemas.js';

/** Validates the `body` part of /package-envelope. */
export const validatePackageEnvelopeRequest = checkedBody<PackageEnvelopeRequest>(packageEnvelopeRequest);

/**
 * The rollback verdict of /workflow-inspect: oapp-format's, and `contentCompared` when the package's sequence equals
 * the query's `newest`: whether its content digest was compared with the one the agent remembers (`newest=SEQ:SHA256`).
 * `false` (no digest given): the verdict says only that the sequence is the same, not that the release is (an agent
 * that remembered other content under it would refuse it, POLICY_SEQUENCE_REUSED). Absent when the sequences differ
 * or no `newest` is given: there is no content to compare. `oapp inspect --newest --json` answers the same.
 */
export interface InspectRollbackVerdict extends RollbackVerdict {
  readonly contentCompared?: boolean;
}

/**
 * The rollback verdict of an inspected package against the query's floor, remembered newest, clock and skew: what
 * an agent's freshness check (SPEC.md §6 step 13a) would decide, as `oapp inspect --newest/--now` shows it. A
 * `newest` without a digest is judged with the package's own, and a package of that very sequence then carries
 * `contentCompared: false` (the verdict is not a claim that the content is the one the agent accepted).
 */
function rollbackOf(i: PackageInspection, q: InspectFreshness): InspectRollbackVerdict {
  const release = {
    formatVersion: i.formatVersion,
    sequence: i.sequence,
    createdAt: i.createdAt,
    expiresAt: i.expiresAt,
  };
  const newest =
    q.newest === undefined
      ? undefined
      : { sequence: q.newest.sequence, contentSha256: q.newest.contentSha256 ?? i.content.sha256 };
  const compared =
    q.newest !== undefined && i.sequence === q.newest.sequence
      ? { contentCompared: q.newest.contentSha256 !== undefined }
      : {};
  try {
    const { verdict } = checkFreshness(release, i.content.sha256, q.minimumSequence, {
      newest,
      now: q.now,
      clockSkewSeconds: q.clockSkewSeconds,
    });
    return { verdict, code: null, message: null, ...compared };
  } catch (err) {
    // The query is judged before (inspectFreshnessOf): a POLICY_INVALID here is a failure, not a verdict.
    if (!isOappError(err) || err.code === 'POLICY_INVALID') throw err;
    return { verdict: 'refused', code: err.code, message: err.message, ...compared };
  }
}

/**
 * workflow-inspect: raw `.oapp` bytes → inspection JSON (no secret key needed). With freshness inputs (the query's
 * `minimumSequence`, `newest`, `now`, `clockSkewSeconds`), `rollback` is the verdict; without, `null`.
 */
export async function workflowInspect(
  pkg: Uint8Array,
  freshness?: InspectFreshness,
): Promise<OperationResult> {
  const inspection = await inspectPackage(pkg);
  const rollback = freshness === undefined ? null : rollbackOf(inspection, freshness);
  return jsonResult({ ok: true, ...inspection, rollback });
}

function trusted(ring: Keyring, refs: readonly SignerRef[] | undefined, field: string): TrustedKey[] {
  return (refs ?? []).map((ref, i) => {
    const id = typeof ref === 'string' ? ref : ref.id;
    const key: Key = ring.resolve(id, `packaging.${field}[${i}]`, 'sign', 'public');
    return { id, publicKey: key.bytes };
  });
}

/** The caller's verification policy for the incoming package, with every key id resolved in `keys`. */
function policyOf(ring: Keyring, p: PackageEnvelopeRequest['packaging']): DeploymentPolicy {
  return {
    packageId: p.packageId,
    packagerIdentities: (p.packagerIdentities ?? []).map((id, i) => ({
      id,
      publicKey: ring.resolve(id, `packaging.packagerIdentities[${i}]`, 'authenticated', 'public').bytes,
    })),
    requiredSigners: trusted(ring, p.requiredSigners, 'requiredSigners'),
    additionalSigners: trusted(ring, p.additionalSigners, 'additionalSigners'),
    requiredAdditionalSignerCount: p.requiredAdditionalSignerCount ?? 0,
    minimumSequence: p.minimumSequence,
  };
}

/** package-envelope: open an existing `.oapp` under the caller's policy, endorse, re-encrypt. */
export async function packageEnvelope(form: KeyedForm<PackageEnvelopeRequest>): Promise<OperationResult> {
  const { request, ring, content } = form;
  const open = {
    policy: policyOf(ring, request.packaging),
    recipientSecretKey: ring.resolve(request.recipientKey, 'recipientKey', 'authenticated', 'secret'),
  };
  const packagerSecretKey = resolvePackager(ring, request.packagerIdentityPrivateKey);
  const recipients = resolveRecipients(ring, request.encryptionKeys);
  const signers = resolveSigners(ring, request.signers);
  const pkg = await repackage(await content(), { open, packagerSecretKey, recipients, signers });
  return { status: 200, type: OCTET_STREAM, body: pkg };
}
