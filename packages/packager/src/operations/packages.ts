import type { Key } from '@org/envelope-crypto';
import { inspectPackage, repackage, type DeploymentPolicy, type TrustedKey } from '@org/oapp-format';
import { bodyValidator } from '../body-json.js';
import { resolvePackager, resolveRecipients, resolveSigners, type Keyring } from '../keyring.js';
import { OCTET_STREAM } from '../negotiate.js';
import { jsonResult } from '../internal/json-result.js';
import type { KeyedForm, OperationResult } from '../operation.js';
import {
  PACKAGE_ENVELOPE_REQUEST_SCHEMA,
  type PackageEnvelopeRequest,
  type SignerRef,
} from '../request-schemas.js';

/** Validates the `body` part of /package-envelope. */
export const validatePackageEnvelopeRequest = bodyValidator<PackageEnvelopeRequest>(
  PACKAGE_ENVELOPE_REQUEST_SCHEMA,
);

/** workflow-inspect: raw `.oapp` bytes → inspection JSON (no secret key needed). */
export async function workflowInspect(pkg: Uint8Array): Promise<OperationResult> {
  const inspection = await inspectPackage(pkg);
  return jsonResult({ ok: true, ...inspection });
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
