import type { Key } from '@org/envelope-crypto';
import { inspectPackage, repackage, type DeploymentPolicy, type TrustedKey } from '@org/oapp-format';
import type { RequestHandler } from 'express';
import { bodyValidator, parseBody } from '../body-json.js';
import type { AppDeps } from '../deps.js';
import {
  parseKeyring,
  resolvePackager,
  resolveRecipients,
  resolveSigners,
  type Keyring,
} from '../keyring.js';
import { JSON_TYPE, negotiate, OCTET_STREAM } from '../negotiate.js';
import {
  PACKAGE_ENVELOPE_REQUEST_SCHEMA,
  type PackageEnvelopeRequest,
  type SignerRef,
} from '../request-schemas.js';
import { readAll, readForm, readOctets, uploadOptionsFor } from '../upload.js';

const validate = bodyValidator<PackageEnvelopeRequest>(PACKAGE_ENVELOPE_REQUEST_SCHEMA);

/** POST /workflow-inspect: raw `.oapp` bytes → inspection JSON (no secret key needed). */
export function workflowInspect(deps: AppDeps): RequestHandler {
  const options = uploadOptionsFor(deps.uploads, '/workflow-inspect');
  return async (req, res) => {
    negotiate(req, [JSON_TYPE]);
    const stream = await readOctets(req, options);
    const inspection = await inspectPackage(await readAll(stream));
    res.json({ ok: true, ...inspection });
  };
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
  };
}

/** POST /package-envelope: open an existing `.oapp` under the caller's policy, endorse, re-encrypt. */
export function packageEnvelope(deps: AppDeps): RequestHandler {
  const options = uploadOptionsFor(deps.uploads, '/package-envelope');
  return async (req, res) => {
    negotiate(req, [OCTET_STREAM]);
    const form = await readForm(req, options);
    const request = validate(parseBody(form.body, deps.limits.bodyFieldBytes));
    const ring = parseKeyring(request.keys);
    try {
      const open = {
        policy: policyOf(ring, request.packaging),
        recipientSecretKey: ring.resolve(request.recipientKey, 'recipientKey', 'authenticated', 'secret'),
      };
      const packagerSecretKey = resolvePackager(ring, request.packagerIdentityPrivateKey);
      const recipients = resolveRecipients(ring, request.encryptionKeys);
      const signers = resolveSigners(ring, request.signers);
      const source = await readAll(form.stream);
      const pkg = await repackage(source, { open, packagerSecretKey, recipients, signers });
      res.type(OCTET_STREAM).send(Buffer.from(pkg.buffer, pkg.byteOffset, pkg.byteLength));
    } finally {
      ring.wipe();
    }
  };
}
