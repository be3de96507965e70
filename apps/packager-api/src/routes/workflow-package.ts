import { createPackage } from '@org/oapp-format';
import { canonicalize, compileWorkflow } from '@org/workflow-compiler';
import type { RequestHandler } from 'express';
import { parseBody, bodyValidator } from '../body-json.js';
import type { AppDeps } from '../deps.js';
import { parseKeyring, resolvePackager, resolveRecipients, resolveSigners } from '../keyring.js';
import { negotiate, OCTET_STREAM } from '../negotiate.js';
import { PACKAGE_REQUEST_SCHEMA, type PackageRequest } from '../request-schemas.js';
import { readAll, readForm, uploadOptionsFor } from '../upload.js';

const validate = bodyValidator<PackageRequest>(PACKAGE_REQUEST_SCHEMA);

/** POST /workflow-package: `body` = PackageRequest, `stream` = workflow JSON → compile → `.oapp` bytes. */
export function workflowPackage(deps: AppDeps): RequestHandler {
  const options = uploadOptionsFor(deps.uploads, '/workflow-package');
  return async (req, res) => {
    negotiate(req, [OCTET_STREAM]);
    const form = await readForm(req, options);
    const request = validate(parseBody(form.body, deps.limits.bodyFieldBytes));
    const ring = parseKeyring(request.keys);
    try {
      const packagerSecretKey = resolvePackager(ring, request.packagerIdentityPrivateKey);
      const recipients = resolveRecipients(ring, request.encryptionKeys);
      const signers = resolveSigners(ring, request.signers);
      const source = await readAll(form.stream);
      const compiled = await compileWorkflow(source, {
        resourceDirs: deps.resourceDirs,
        maxInputBytes: deps.limits.workflowBytes,
      });
      // The content is the JCS form of the compiled workflow: its SHA-256 equals /workflow-hash.
      const content = Buffer.from(canonicalize(compiled.workflow), 'utf8');
      const pkg = createPackage({
        packageId: request.packageId,
        content,
        packagerSecretKey,
        recipients,
        signers,
        license: request.license,
      });
      res.type(OCTET_STREAM).send(Buffer.from(pkg.buffer, pkg.byteOffset, pkg.byteLength));
    } finally {
      ring.wipe();
    }
  };
}
