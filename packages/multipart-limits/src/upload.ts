import type { Readable } from 'node:stream';
import type { UploadKind } from './check-headers.js';

/** What a step receives from a request (docs/interfaces.md §6.1–6.2). */
export interface Upload {
  /** How the request body was sent. */
  kind: UploadKind;
  /**
   * `json`/`text`: the whole body as a string (exact bytes, strict UTF-8, BOM kept, JSON not parsed).
   * `multipart`: the `body` part, or undefined when the form has none. Otherwise undefined.
   */
  body: string | undefined;
  /**
   * `octet`: the request body (empty when 0 bytes, never undefined). `multipart`: the `stream` part's content,
   * or undefined when the form has none (apps hand a step an empty reader then). Otherwise undefined.
   * It streams with backpressure and ends only after the whole request was read and valid; any later
   * failure makes it error with an UploadError, never end early.
   */
  stream: Readable | undefined;
  /**
   * `multipart`: the `stream` part's file name as metadata, from `filename` as sent or `filename*` decoded
   * (RFC 8187, UTF-8 only, no control characters); undefined when the part has neither. Never a path to use.
   */
  streamFilename?: string | undefined;
}
