import { encryptString } from '@org/envelope-crypto';
import { encryptBootstrap } from '@org/oapp-format';
import { validateBootstrap } from '@org/workflow-compiler';
import { checkedBody } from '../body-json.js';
import { bootstrapEncryptRequest, stringEncryptRequest } from '../generated/validators.js';
import { RequestError } from '../errors.js';
import { resolvePackager, resolveRecipients, resolveSigners } from '../keyring.js';
import { OCTET_STREAM, TEXT_PLAIN } from '../negotiate.js';
import type { KeyedForm, OperationEnv, OperationResult } from '../operation.js';
import { checkRelease, releaseOptions } from '../release.js';
import { type BootstrapEncryptRequest, type EncryptRequest } from '../request-schemas.js';

/** Validates the `body` part of /bootstrap-encrypt. */
export const validateBootstrapEncryptRequest = checkedBody<BootstrapEncryptRequest>(bootstrapEncryptRequest);

/**
 * The checks of /bootstrap-encrypt's validated `body` part before its keys are parsed: the release members, and
 * no `signers` with `formatVersion` 1 (a format 1 bootstrap carries no signatures).
 * @throws RequestError `REQUEST_FIELD_INVALID`.
 */
export function checkBootstrapEncryptRequest(request: BootstrapEncryptRequest): void {
  checkRelease(request as BootstrapEncryptRequest & Record<string, unknown>, ['signers']);
}
/** Validates the `body` part of /string-encrypt. */
export const validateStringEncryptRequest = checkedBody<EncryptRequest>(stringEncryptRequest);

/** Both answers are ASCII text (Base64, `-2/` + Base64), served as whichever of the two types the client accepts. */
export const TEXT_OFFERS = [TEXT_PLAIN, OCTET_STREAM] as const;

function textResult(type: string, text: string): OperationResult {
  return { status: 200, type: type === TEXT_PLAIN ? 'text/plain; charset=utf-8' : OCTET_STREAM, body: text };
}

/**
 * bootstrap-encrypt: validate the bootstrap (the `stream` part), then encrypt it for every recipient, signed by
 * every signer → Base64 text.
 */
export async function bootstrapEncrypt(
  form: KeyedForm<BootstrapEncryptRequest>,
  env: Pick<OperationEnv, 'limits'>,
): Promise<OperationResult> {
  const { type, request, ring, content } = form;
  const packagerSecretKey = resolvePackager(ring, request.packagerIdentityPrivateKey);
  const recipients = resolveRecipients(ring, request.encryptionKeys);
  const signers = resolveSigners(ring, request.signers);
  const release = releaseOptions(request);
  const bootstrap = await content();
  // Nothing is encrypted unless the bootstrap validates (docs/interfaces.md §1.3).
  validateBootstrap(bootstrap, { maxBytes: env.limits.bootstrapBytes });
  return textResult(
    type,
    encryptBootstrap(bootstrap, { packagerSecretKey, recipients, signers, ...release }),
  );
}

/**
 * The check of /string-encrypt before its keys are parsed: exactly one `encryptionKeys` id.
 * @throws RequestError `REQUEST_ONE_RECIPIENT_REQUIRED`.
 */
export function exactlyOneRecipient(request: EncryptRequest): void {
  const ids = request.encryptionKeys;
  if (ids.length === 1) return;
  throw new RequestError(
    'REQUEST_ONE_RECIPIENT_REQUIRED',
    `encryptionKeys must name exactly one key for /string-encrypt, got ${ids.length}`,
    { errors: [{ pointer: '/encryptionKeys', detail: `has ${ids.length} ids, exactly 1 is required` }] },
  );
}

/** string-encrypt: one recipient, plaintext from the `stream` part → `-2/` text. */
export async function stringEncrypt(form: KeyedForm<EncryptRequest>): Promise<OperationResult> {
  const { type, request, ring, content } = form;
  const sender = resolvePackager(ring, request.packagerIdentityPrivateKey);
  const [recipient] = resolveRecipients(ring, request.encryptionKeys);
  // The plaintext is zeroed by the caller once the request is done, whatever its outcome.
  return textResult(type, encryptString(await content(), recipient!, sender));
}
