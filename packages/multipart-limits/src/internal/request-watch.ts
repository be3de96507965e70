import type { IncomingMessage } from 'node:http';
import { UploadError } from '../errors.js';

/** The error every client abort, request error or caller abort becomes. */
export function abortedError(cause?: unknown): UploadError {
  return new UploadError('UPLOAD_ABORTED', 'the upload was aborted before it was complete', { cause });
}

/**
 * Calls `onAbort` once when the client aborts (`close` before the request is complete), the request errors,
 * or `signal` aborts. Returns the function that removes every listener it added (no leaked listeners).
 */
export function watchRequest(
  req: IncomingMessage,
  signal: AbortSignal | undefined,
  onAbort: (err: UploadError) => void,
): () => void {
  const onError = (err: unknown): void => onAbort(abortedError(err));
  const onClose = (): void => {
    if (!req.complete) onAbort(abortedError());
  };
  const onSignal = (): void => onAbort(abortedError(signal?.reason));
  req.on('error', onError);
  req.on('close', onClose);
  signal?.addEventListener('abort', onSignal, { once: true });
  return () => {
    req.off('error', onError);
    req.off('close', onClose);
    signal?.removeEventListener('abort', onSignal);
  };
}
