import { createPackage } from '@org/oapp-format';
import { canonicalize, compileWorkflow } from '@org/workflow-compiler';
import { bodyValidator } from '../body-json.js';
import type { AppDeps } from '../deps.js';
import { keyedFormRoute } from '../form-route.js';
import { resolvePackager, resolveRecipients, resolveSigners } from '../keyring.js';
import { OCTET_STREAM } from '../negotiate.js';
import { sendBody, type TableHandler } from '../plain-http.js';
import { PACKAGE_REQUEST_SCHEMA, type PackageRequest } from '../request-schemas.js';

const validate = bodyValidator<PackageRequest>(PACKAGE_REQUEST_SCHEMA);

/** POST /workflow-package: `body` = PackageRequest, `stream` = workflow JSON → compile → `.oapp` bytes. */
export function workflowPackage(deps: AppDeps): TableHandler {
  const compileOptions = { resourceDirs: deps.resourceDirs, maxInputBytes: deps.limits.workflowBytes };
  return keyedFormRoute(deps, {
    path: '/workflow-package',
    offers: [OCTET_STREAM],
    validate,
    handle: async ({ res, request, ring, content }) => {
      const packagerSecretKey = resolvePackager(ring, request.packagerIdentityPrivateKey);
      const recipients = resolveRecipients(ring, request.encryptionKeys);
      const signers = resolveSigners(ring, request.signers);
      const compiled = await compileWorkflow(await content(), compileOptions);
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
        });
        sendBody(res, OCTET_STREAM, Buffer.from(pkg.buffer, pkg.byteOffset, pkg.byteLength));
      } finally {
        packaged.fill(0);
      }
    },
  });
}
