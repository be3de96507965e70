import type { ServerResponse } from 'node:http';
import { encryptString } from '@org/envelope-crypto';
import { encryptBootstrap } from '@org/oapp-format';
import { validateBootstrap } from '@org/workflow-compiler';
import { bodyValidator } from '../body-json.js';
import type { AppDeps } from '../deps.js';
import { RequestError } from '../errors.js';
import { keyedFormRoute } from '../form-route.js';
import { resolvePackager, resolveRecipients } from '../keyring.js';
import { OCTET_STREAM, TEXT_PLAIN } from '../negotiate.js';
import { sendBody, type TableHandler } from '../plain-http.js';
import {
  BOOTSTRAP_ENCRYPT_REQUEST_SCHEMA,
  STRING_ENCRYPT_REQUEST_SCHEMA,
  type EncryptRequest,
} from '../request-schemas.js';

const validateBootstrapRequest = bodyValidator<EncryptRequest>(BOOTSTRAP_ENCRYPT_REQUEST_SCHEMA);
const validateStringRequest = bodyValidator<EncryptRequest>(STRING_ENCRYPT_REQUEST_SCHEMA);

/** Both answers are ASCII text (Base64, `-2/` + Base64), served as whichever of the two types the client accepts. */
const TEXT_OFFERS = [TEXT_PLAIN, OCTET_STREAM] as const;

function sendText(res: ServerResponse, type: string, text: string): void {
  sendBody(res, type === TEXT_PLAIN ? 'text/plain; charset=utf-8' : OCTET_STREAM, text);
}

/** POST /bootstrap-encrypt: validate the bootstrap, then encrypt it for every recipient → Base64 text. */
export function bootstrapEncrypt(deps: AppDeps): TableHandler {
  return keyedFormRoute(deps, {
    path: '/bootstrap-encrypt',
    offers: TEXT_OFFERS,
    validate: validateBootstrapRequest,
    handle: async ({ res, type, request, ring, content }) => {
      const packagerSecretKey = resolvePackager(ring, request.packagerIdentityPrivateKey);
      const recipients = resolveRecipients(ring, request.encryptionKeys);
      const bootstrap = await content();
      // Nothing is encrypted unless the bootstrap validates (docs/interfaces.md §1.3).
      validateBootstrap(bootstrap, { maxBytes: deps.limits.bootstrapBytes });
      sendText(res, type, encryptBootstrap(bootstrap, { packagerSecretKey, recipients }));
    },
  });
}

function exactlyOne(request: EncryptRequest): void {
  const ids = request.encryptionKeys;
  if (ids.length === 1) return;
  throw new RequestError(
    'REQUEST_ONE_RECIPIENT_REQUIRED',
    `encryptionKeys must name exactly one key for /string-encrypt, got ${ids.length}`,
    { errors: [{ pointer: '/encryptionKeys', detail: `has ${ids.length} ids, exactly 1 is required` }] },
  );
}

/** POST /string-encrypt: one recipient, plaintext from `stream` → `-2/` text. */
export function stringEncrypt(deps: AppDeps): TableHandler {
  return keyedFormRoute(deps, {
    path: '/string-encrypt',
    offers: TEXT_OFFERS,
    validate: validateStringRequest,
    check: exactlyOne,
    handle: async ({ res, type, request, ring, content }) => {
      const sender = resolvePackager(ring, request.packagerIdentityPrivateKey);
      const [recipient] = resolveRecipients(ring, request.encryptionKeys);
      // The plaintext is zeroed by keyedFormRoute once the request is done, whatever its outcome.
      sendText(res, type, encryptString(await content(), recipient!, sender));
    },
  });
}
