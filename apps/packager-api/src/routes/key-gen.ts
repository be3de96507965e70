import { generateKeyPair, keyToHex, wipe, type KeyPurpose } from '@org/envelope-crypto';
import type { RequestHandler } from 'express';
import { RequestError } from '../errors.js';
import { JSON_TYPE, negotiate } from '../negotiate.js';
import { sendJson, type TableHandler } from '../plain-http.js';

export const KEY_GEN_PURPOSES = ['sign', 'authenticated', 'anonymous', 'symmetric'] as const;
/**
 * Older vocabulary accepted as aliases; the response echoes the canonical name (docs/interfaces.md §1.5). A Map, not an
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

function purposeOf(raw: unknown): KeyPurpose {
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

/** GET /key-gen?purpose=: a fresh key pair as hex. Never cached, never logged. */
export function keyGen(): RequestHandler {
  return (req, res) => {
    res.setHeader('Cache-Control', 'no-store');
    negotiate(req, [JSON_TYPE]);
    const purpose = purposeOf(req.query['purpose']);
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
    res.type(JSON_TYPE).send(body);
  };
}

/** GET /health. */
export function health(): TableHandler {
  return (_req, res) => {
    sendJson(res, { ok: true });
  };
}
