import { parse as parseQuery } from 'node:querystring';
import { generateKeyPair, keyToHex, wipe, type KeyPurpose } from '@org/envelope-crypto';
import { RequestError } from '../errors.js';
import { JSON_ANSWER_TYPE, jsonResult } from '../internal/json-result.js';
import type { OperationResult } from '../operation.js';

export const KEY_GEN_PURPOSES = ['sign', 'authenticated', 'anonymous', 'symmetric'] as const;
/**
 * Older vocabulary accepted as aliases; the answer echoes the canonical name (docs/interfaces.md §1.5). A Map, not an
 * object: `purpose=toString` must not find an inherited property.
 */
export const KEY_GEN_ALIASES: ReadonlyMap<string, KeyPurpose> = new Map([
  ['box', 'authenticated'],
  ['secretbox', 'symmetric'],
]);

function purposeError(
  code: 'REQUEST_MISSING_PURPOSE' | 'REQUEST_INVALID_PURPOSE',
  message: string,
): RequestError {
  // Problem body plus the interface's `{ok:false, error:{code,message,allowedPurposes}}` members (ADR 0005).
  const compat = code === 'REQUEST_MISSING_PURPOSE' ? 'missing_purpose' : 'invalid_purpose';
  return new RequestError(code, message, {
    errors: [{ pointer: '/purpose', detail: message }],
    extensions: { ok: false, error: { code: compat, message, allowedPurposes: [...KEY_GEN_PURPOSES] } },
  });
}

/**
 * The `purpose` of a key-gen request from its URL's query string (without the `?`), parsed with node's
 * `querystring.parse`, as Express 5's default ("simple") query parser does: a repeated `purpose` is an array,
 * `+` is a space, and an inherited name finds nothing.
 * @throws RequestError `REQUEST_MISSING_PURPOSE`, `REQUEST_INVALID_PURPOSE`.
 */
export function keyGenPurpose(query: string | null | undefined): KeyPurpose {
  const raw = parseQuery(query ?? '')['purpose'];
  if (raw === undefined || raw === '')
    throw purposeError('REQUEST_MISSING_PURPOSE', 'query parameter purpose is required');
  if (typeof raw !== 'string')
    throw purposeError('REQUEST_INVALID_PURPOSE', 'query parameter purpose must appear once');
  const purpose = (KEY_GEN_PURPOSES as readonly string[]).includes(raw)
    ? (raw as KeyPurpose)
    : KEY_GEN_ALIASES.get(raw);
  if (purpose === undefined) {
    throw purposeError('REQUEST_INVALID_PURPOSE', `purpose must be one of ${KEY_GEN_PURPOSES.join(', ')}`);
  }
  return purpose;
}

/** key-gen: a fresh key pair as hex (never cached, never logged: its answers say `Cache-Control: no-store`). */
export function keyGen(purpose: KeyPurpose): OperationResult {
  const pair = generateKeyPair(purpose);
  const body = JSON.stringify({
    ok: true,
    purpose,
    encoding: 'hex',
    keyPair: {
      publicKeyHex: pair.publicKey === null ? null : keyToHex(pair.publicKey),
      secretKeyHex: keyToHex(pair.secretKey),
    },
  });
  wipe(pair.secretKey.bytes);
  return { status: 200, type: JSON_ANSWER_TYPE, body };
}

/** health: `{"ok":true}`. */
export function health(): OperationResult {
  return jsonResult({ ok: true });
}
