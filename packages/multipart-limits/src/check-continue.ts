import type { IncomingMessage, ServerResponse } from 'node:http';
import { planUpload } from './check-headers.js';
import { isUploadError } from './errors.js';
import type { UploadError } from './errors.js';
import { resolveOptions } from './options.js';
import type { ReadUploadOptions } from './options.js';

/** Options of {@link createCheckContinueListener}. */
export interface CheckContinueOptions {
  /** The upload options of the route this request goes to, or undefined when it takes no upload. */
  optionsFor: (req: IncomingMessage) => ReadUploadOptions | undefined;
  /**
   * Answers a refused request (the app maps `error.code` to 413/415/400). `Connection: close` is already
   * set: the client may still send the body, which is never read.
   */
  onRejected: (error: UploadError, req: IncomingMessage, res: ServerResponse) => void;
  /** The app's normal request handler (for Express: the app itself). */
  onRequest: (req: IncomingMessage, res: ServerResponse) => void;
}

/**
 * A listener for `server.on('checkContinue', …)`. Node sends `100 Continue` by itself unless such a
 * listener exists; this one runs {@link checkUploadHeaders} first, so an over-limit or refused upload is
 * answered without `100 Continue` and without reading a body byte (S8). Otherwise it writes
 * `100 Continue` and hands the request to `onRequest`.
 * @throws nothing itself; errors other than UploadError (caller bugs in `optionsFor`) are rethrown.
 */
export function createCheckContinueListener(
  options: CheckContinueOptions,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const uploadOptions = options.optionsFor(req);
    if (uploadOptions !== undefined) {
      try {
        planUpload(req.headers, resolveOptions(uploadOptions));
      } catch (err) {
        if (!isUploadError(err)) throw err;
        res.setHeader('connection', 'close');
        options.onRejected(err, req, res);
        return;
      }
    }
    res.writeContinue();
    options.onRequest(req, res);
  };
}
