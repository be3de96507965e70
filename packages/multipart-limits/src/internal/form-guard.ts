import { Transform } from 'node:stream';
import type { TransformCallback } from 'node:stream';
import type { Limits } from 'busboy';
import { UploadError } from '../errors.js';
import { MAX_PARTS, MAX_PART_HEADER_LINES } from '../options.js';
import { FormScanner } from './form-scanner.js';
import { parsePartHead } from './part-head.js';
import type { PartHead } from './part-head.js';
import { PartRules } from './part-rules.js';
import { decodeUtf8 } from './raw-body.js';

/**
 * busboy's limits, every one set explicitly (toolchain §8: the defaults are Infinity). Each is one above what
 * the guard allows, because busboy signals a limit when it is *reached*; the guard refuses first, and a busboy
 * limit event is treated as an error anyway. `headerPairs` and `fieldNameSize` are not read by busboy's
 * multipart parser (the guard bounds header blocks instead) but are set so no default applies.
 */
export function busboyLimits(fileBytes: number, fieldBytes: number): Limits {
  return {
    fileSize: fileBytes + 1,
    fieldSize: fieldBytes + 1,
    files: 1,
    fields: 1,
    parts: MAX_PARTS + 1,
    headerPairs: MAX_PART_HEADER_LINES,
    fieldNameSize: 64,
  };
}

/**
 * The transform between the request and busboy: counts request bytes against the cap
 * (`UPLOAD_REQUEST_TOO_LARGE`), runs the {@link FormScanner} and the {@link PartRules} on each header block as
 * it completes, and keeps the `body` part's exact bytes decoded as strict UTF-8.
 */
export class FormGuard extends Transform {
  /** Header facts of every part seen, in order (busboy's events are cross-checked against them). */
  readonly heads: PartHead[] = [];
  readonly rules = new PartRules();
  /** The `body` part as a string, once it ended. */
  body: string | undefined;
  private bytes = 0;
  private readonly scanner: FormScanner;

  constructor(
    boundary: string,
    private readonly byteCap: number,
    bodyFieldBytes: number,
  ) {
    super();
    this.scanner = new FormScanner(boundary, bodyFieldBytes, {
      onPartHeaders: (lines) => this.admit(lines),
      onPartEnd: (captured) => {
        if (captured !== undefined) this.body = decodeUtf8(captured, 'the body part');
      },
    });
  }

  private admit(lines: string[]): boolean {
    const head = parsePartHead(lines);
    this.heads.push(head);
    return this.rules.admit(head) === 'body';
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.bytes > this.byteCap) {
      callback(
        new UploadError(
          'UPLOAD_REQUEST_TOO_LARGE',
          `the request exceeds the limit of ${this.byteCap} bytes`,
          {
            details: { limit: this.byteCap },
          },
        ),
      );
      return;
    }
    try {
      this.scanner.push(chunk);
    } catch (err) {
      callback(err as Error);
      return;
    }
    callback(null, chunk);
  }

  override _flush(callback: TransformCallback): void {
    try {
      this.scanner.end();
    } catch (err) {
      callback(err as Error);
      return;
    }
    callback();
  }
}
