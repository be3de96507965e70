import type { Key } from '@org/envelope-crypto';
import { inspectPackage, repackage, type DeploymentPolicy, type TrustedKey } from '@org/oapp-format';
import { bodyValidator } from '../body-json.js';
import type { AppDeps } from '../deps.js';
import { keyedFormRoute } from '../form-route.js';
import { resolvePackager, resolveRecipients, resolveSigners, type Keyring } from '../keyring.js';
import { JSON_TYPE, negotiate, OCTET_STREAM } from '../negotiate.js';
import { sendBody, sendJson, type TableHandler } from '../plain-http.js';
import {
  PACKAGE_ENVELOPE_REQUEST_SCHEMA,
  type PackageEnvelopeRequest,
  type SignerRef,
} from '../request-schemas.js';
import { readOctets, uploadOptionsFor } from '../upload.js';

const validate = bodyValidator<PackageEnvelopeRequest>(PACKAGE_ENVELOPE_REQUEST_SCHEMA);

/** POST /workflow-inspect: raw `.oapp` bytes → inspection JSON (no secret key needed). */
export function workflowInspect(deps: AppDeps): TableHandler {
  const options = uploadOptionsFor(deps.uploads, '/workflow-inspect');
  return async (req, res) => {
    negotiate(req, [JSON_TYPE]);
    const inspection = await inspectPackage(await readOctets(req, options));
    sendJson(res, { ok: true, ...inspection });
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
export function packageEnvelope(deps: AppDeps): TableHandler {
  return keyedFormRoute(deps, {
    path: '/package-envelope',
    offers: [OCTET_STREAM],
    validate,
    handle: async ({ res, request, ring, content }) => {
      const open = {
        policy: policyOf(ring, request.packaging),
        recipientSecretKey: ring.resolve(request.recipientKey, 'recipientKey', 'authenticated', 'secret'),
      };
      const packagerSecretKey = resolvePackager(ring, request.packagerIdentityPrivateKey);
      const recipients = resolveRecipients(ring, request.encryptionKeys);
      const signers = resolveSigners(ring, request.signers);
      const pkg = await repackage(await content(), { open, packagerSecretKey, recipients, signers });
      sendBody(res, OCTET_STREAM, Buffer.from(pkg.buffer, pkg.byteOffset, pkg.byteLength));
    },
  });
}
