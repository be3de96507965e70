import { createPackage } from '@org/oapp-format';
import { canonicalize, compileWorkflow } from '@org/workflow-compiler';
import { checkedBody } from '../body-json.js';
import { packageRequest } from '../generated/validators.js';
import { resolvePackager, resolveRecipients, resolveSigners } from '../keyring.js';
import { OCTET_STREAM } from '../negotiate.js';
import type { KeyedForm, OperationEnv, OperationResult } from '../operation.js';
import { checkRelease, releaseOptions } from '../release.js';
import { type PackageRequest } from '../request-schemas.js';

/** Validates the `body` part of /workflow-package. */
export const validatePackageRequest = checkedBody<PackageRequest>(packageRequest);

/**
 * The checks of /workflow-package's validated `body` part before its keys are parsed: the release members
 * (`expiresAt` a calendar time; no `sequence` or `expiresAt` with `formatVersion` 1).
 * @throws RequestError `REQUEST_FIELD_INVALID`.
 */
export function checkPackageRequest(request: PackageRequest): void {
  checkRelease(request as PackageRequest & Record<string, unknown>);
}

/** workflow-package: `body` = PackageRequest, `stream` = workflow JSON → compile → `.oapp` bytes. */
export async function workflowPackage(
  form: KeyedForm<PackageRequest>,
  env: Pick<OperationEnv, 'limits' | 'resourceDirs'>,
): Promise<OperationResult> {
  const { request, ring, content } = form;
  const packagerSecretKey = resolvePackager(ring, request.packagerIdentityPrivateKey);
  const recipients = resolveRecipients(ring, request.encryptionKeys);
  const signers = resolveSigners(ring, request.signers);
  const release = releaseOptions(request);
  const compiled = await compileWorkflow(await content(), {
    resourceDirs: env.resourceDirs,
    maxInputBytes: env.limits.workflowBytes,
  });
  // The content is the JCS form of the compiled workflow: its SHA-256 equals /workflow-hash.
  const packaged = Buffer.from(canonicalize(compiled.workflow), 'utf8');
  try {
    const pkg = createPackage({
      packageId: request.packageId,
      content: packaged,
      packagerSecretKey,
      recipients,
      signers,
      license: request.license,
      ...release,
    });
    return { status: 200, type: OCTET_STREAM, body: pkg };
  } finally {
    packaged.fill(0);
  }
}
