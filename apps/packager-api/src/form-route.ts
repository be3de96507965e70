import type { BodyValidator } from './body-json.js';
import { parseBody } from './body-json.js';
import type { AppDeps } from './deps.js';
import { parseKeyring, type Keyring } from './keyring.js';
import { negotiate } from './negotiate.js';
import type { TableHandler, TableRequest, TableResponse } from './plain-http.js';
import type { KeyInput } from './request-schemas.js';
import { readForm, uploadOptionsFor } from './upload.js';

/** What a keyed form route works with once its `body` part is valid and its keys are parsed. */
export interface KeyedForm<T> {
  req: TableRequest;
  res: TableResponse;
  /** The negotiated response type. */
  type: string;
  /** The validated `body` part. */
  request: T;
  /** Every key of `request.keys`, parsed. */
  ring: Keyring;
  /** The `stream` part's bytes (zeroed when the request is done). */
  content: () => Promise<Uint8Array>;
}

/** A route's description for {@link keyedFormRoute}. */
export interface KeyedFormSpec<T> {
  /** The route path (its upload options come from `deps.uploads`). */
  path: string;
  /** What the endpoint can produce, best first (negotiated before the body is read). */
  offers: readonly string[];
  validate: BodyValidator<T>;
  /** Checks of the validated request that come before its keys are parsed. */
  check?: (request: T) => void;
  handle: (form: KeyedForm<T>) => Promise<void>;
}

/**
 * The sequence every `body` + `stream` route with keys shares (ADR 0005, 0007): negotiate `Accept`, read the
 * form, parse and validate the `body` part, run the route's own checks, parse every key, then hand over. The
 * parsed keys and the `stream` part's bytes are zeroed when the request is done, on every path, failures
 * included.
 */
export function keyedFormRoute<T extends { keys: readonly KeyInput[] }>(
  deps: AppDeps,
  spec: KeyedFormSpec<T>,
): TableHandler {
  const options = uploadOptionsFor(deps.uploads, spec.path);
  const { bodyFieldBytes } = deps.limits;
  return async (req, res) => {
    const type = negotiate(req, spec.offers);
    const form = await readForm(req, options);
    try {
      const request = spec.validate(parseBody(form.body, bodyFieldBytes));
      spec.check?.(request);
      const ring = parseKeyring(request.keys);
      try {
        await spec.handle({ req, res, type, request, ring, content: form.content });
      } finally {
        ring.wipe();
      }
    } finally {
      form.wipe();
    }
  };
}
