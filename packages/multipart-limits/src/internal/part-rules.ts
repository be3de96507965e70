import { UploadError } from '../errors.js';
import type { PartName } from '../options.js';
import { excerpt } from './excerpt.js';
import type { PartHead } from './part-head.js';

const IDENTITY_TRANSFER_ENCODINGS: ReadonlySet<string> = new Set(['7bit', '8bit', 'binary']);

/** Part names compared exactly; `__proto__`, `constructor`, `""` and `Body` are unknown names. */
function knownName(name: string | undefined): PartName {
  if (name === 'body' || name === 'stream') return name;
  const shown = name === undefined ? 'no name' : `name ${excerpt(name)}`;
  throw new UploadError('UPLOAD_UNKNOWN_PART', `part with ${shown} is not allowed; use body and stream`);
}

function checkKind(name: PartName, head: PartHead): void {
  if (name === 'stream' && !head.isFile) {
    throw new UploadError(
      'UPLOAD_STREAM_MUST_BE_FILE',
      'the stream part must be a file part (application/octet-stream or a filename)',
    );
  }
  if (name === 'body' && head.isFile) {
    throw new UploadError(
      'UPLOAD_BODY_MUST_BE_FIELD',
      'the body part must be a text field without a filename',
    );
  }
}

function checkEncoding(name: PartName, head: PartHead): void {
  if (head.transferEncoding !== undefined && !IDENTITY_TRANSFER_ENCODINGS.has(head.transferEncoding)) {
    throw new UploadError('UPLOAD_CONTENT_ENCODING', `the ${name} part uses a content-transfer-encoding`);
  }
  if (name === 'body' && head.charset !== undefined && head.charset !== 'utf-8') {
    throw new UploadError('UPLOAD_UNSUPPORTED_MEDIA_TYPE', 'the body part must be utf-8');
  }
}

/**
 * The part rules of SPEC.md §5, applied in order when a part's headers are complete: known name, not seen
 * before, right kind, `body` before `stream`, identity transfer encoding, utf-8 body.
 */
export class PartRules {
  private readonly seen = new Set<PartName>();

  /**
   * Admits one part and returns its name.
   * @throws UploadError `UPLOAD_UNKNOWN_PART`, `UPLOAD_DUPLICATE_PART`, `UPLOAD_STREAM_MUST_BE_FILE`,
   * `UPLOAD_BODY_MUST_BE_FIELD`, `UPLOAD_PART_ORDER`, `UPLOAD_CONTENT_ENCODING`, `UPLOAD_UNSUPPORTED_MEDIA_TYPE`.
   */
  admit(head: PartHead): PartName {
    const name = knownName(head.name);
    if (this.seen.has(name)) {
      throw new UploadError('UPLOAD_DUPLICATE_PART', `the ${name} part appears more than once`, {
        details: { part: name },
      });
    }
    checkKind(name, head);
    if (name === 'body' && this.seen.has('stream')) {
      throw new UploadError('UPLOAD_PART_ORDER', 'the body part must come before the stream part');
    }
    checkEncoding(name, head);
    this.seen.add(name);
    return name;
  }

  /** True once a part of that name was admitted. */
  has(name: PartName): boolean {
    return this.seen.has(name);
  }
}
