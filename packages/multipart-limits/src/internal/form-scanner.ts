import { UploadError } from '../errors.js';
import { MAX_PART_HEADER_BYTES, MAX_PARTS } from '../options.js';

const CRLF = Buffer.from('\r\n', 'latin1');
const CRLF_CRLF = Buffer.from('\r\n\r\n', 'latin1');
const EMPTY = Buffer.alloc(0);
const DASH = 0x2d;
const CR = 0x0d;
const LF = 0x0a;

type State = 'preamble' | 'content' | 'after-delimiter' | 'headers' | 'done';

/** Callbacks of a {@link FormScanner}; each may throw an UploadError to stop the upload. */
export interface ScannerHooks {
  /** A part's header block is complete; return true to capture its content (at most `captureLimit` bytes). */
  onPartHeaders(lines: string[]): boolean;
  /** A part's content ended at a delimiter; `captured` holds it when the part was captured. */
  onPartEnd(captured: Buffer | undefined): void;
  /**
   * Content bytes `[from, to)` of `buf` that certainly belong to the current part (any part, captured or not).
   * `buf` is only valid during the call: copy what must be kept.
   */
  onPartContent?(buf: Buffer, from: number, to: number): void;
}

/** Options of a {@link FormScanner}. */
export interface ScannerOptions {
  /** Zero the scanner's own copies of request bytes (joined chunks, carries) once they are scanned. */
  wipeCopies?: boolean;
}

/**
 * Framing pre-check that runs on the request bytes before busboy sees them (SPEC.md §4). It finds part
 * delimiters with `Buffer.indexOf`, so it can refuse the third part when it starts (S23, `UPLOAD_UNKNOWN_PART`), bound each
 * header block, hand each header block to the part rules before the part's content arrives, and capture the
 * `body` part's exact bytes (busboy would decode them with a lossy, charset-dependent decoder).
 * Attacker-controlled input: every state bounds what it keeps (`carry` ≤ delimiter or header cap).
 */
export class FormScanner {
  private state: State = 'preamble';
  // busboy also starts as if a CRLF preceded the body, so a body may begin with `--boundary`.
  private carry: Buffer = CRLF;
  private parts = 0;
  /** At the start of a part's content, still looking at the header block's last CRLF (see scanContent). */
  private contentStart = false;
  private captured: Buffer[] | undefined;
  private capturedBytes = 0;
  private readonly delimiter: Buffer;
  private readonly wipeCopies: boolean;

  constructor(
    boundary: string,
    private readonly captureLimit: number,
    private readonly hooks: ScannerHooks,
    options: ScannerOptions = {},
  ) {
    this.delimiter = Buffer.from(`\r\n--${boundary}`, 'latin1');
    this.wipeCopies = options.wipeCopies === true;
  }

  /** True once the closing delimiter was seen. */
  get isComplete(): boolean {
    return this.state === 'done';
  }

  /** Number of parts whose delimiter line was seen. */
  get partCount(): number {
    return this.parts;
  }

  /**
   * Scans the next request bytes.
   * @throws UploadError `UPLOAD_UNKNOWN_PART` (a third part), `UPLOAD_HEADERS_LIMIT`, `UPLOAD_MALFORMED`,
   * `UPLOAD_FIELD_TOO_LARGE`, or whatever a hook throws.
   */
  push(chunk: Buffer): void {
    if (this.carryIsContent(chunk)) {
      const carry = this.carry;
      this.carry = EMPTY;
      this.take(carry, 0, carry.length);
      if (this.wipeCopies && carry !== CRLF) carry.fill(0);
      this.scan(chunk);
      return;
    }
    const joined = this.carry.length !== 0;
    const buf = joined ? Buffer.concat([this.carry, chunk]) : chunk;
    if (joined && this.wipeCopies && this.carry !== CRLF) this.carry.fill(0);
    this.carry = EMPTY;
    try {
      this.scan(buf);
    } finally {
      if (joined && this.wipeCopies) buf.fill(0);
    }
  }

  private scan(buf: Buffer): void {
    let i = 0;
    while (i < buf.length) {
      const next = this.step(buf, i);
      if (next < 0) return;
      i = next;
    }
  }

  /**
   * In content, the carry is the tail that might start a delimiter. When the chunk is at least a delimiter long,
   * a delimiter starting in the carry would end within carry + the chunk's first |D| − 1 bytes: if that short
   * bridge holds none, the carry is content and the chunk can be scanned on its own, without joining (copying)
   * it to the carry.
   */
  private carryIsContent(chunk: Buffer): boolean {
    if (this.carry.length === 0 || this.state !== 'content' || this.contentStart) return false;
    if (chunk.length < this.delimiter.length) return false;
    const bridge = Buffer.concat([this.carry, chunk.subarray(0, this.delimiter.length - 1)]);
    const found = bridge.indexOf(this.delimiter) >= 0;
    if (this.wipeCopies) bridge.fill(0);
    return !found;
  }

  /**
   * The request ended.
   * @throws UploadError `UPLOAD_MALFORMED` when the closing delimiter was not seen (S21).
   */
  end(): void {
    if (this.wipeCopies && this.carry !== CRLF) this.carry.fill(0);
    if (this.state !== 'done') {
      throw new UploadError('UPLOAD_MALFORMED', 'the form ends before its closing delimiter');
    }
  }

  /** Runs the state at `i`; returns where to continue, or -1 after keeping the rest in `carry`. */
  private step(buf: Buffer, i: number): number {
    switch (this.state) {
      case 'preamble':
      case 'content':
        return this.scanContent(buf, i);
      case 'after-delimiter':
        return this.scanAfterDelimiter(buf, i);
      case 'headers':
        return this.scanHeaders(buf, i);
      case 'done':
        return this.scanEpilogue(buf, i);
    }
  }

  /**
   * The epilogue is ignored (RFC 2046) and bounded by the request cap, but must not contain a delimiter:
   * busboy keeps parsing the rest of a chunk after the closing delimiter, so such a form would be read
   * differently depending on how it is split into chunks.
   */
  private scanEpilogue(buf: Buffer, i: number): number {
    if (buf.indexOf(this.delimiter, i) >= 0) {
      throw new UploadError('UPLOAD_MALFORMED', 'the epilogue contains a delimiter');
    }
    this.carry = Buffer.from(buf.subarray(Math.max(i, buf.length - (this.delimiter.length - 1))));
    return -1;
  }

  private scanContent(buf: Buffer, i: number): number {
    if (this.contentStart) {
      i = this.leaveHeaderEnd(buf, i);
      if (i < 0) return -1;
    }
    const at = buf.indexOf(this.delimiter, i);
    if (at < 0) {
      // The last delimiter-length − 1 bytes may start a delimiter: keep them, take the rest as content.
      const keep = Math.max(i, buf.length - (this.delimiter.length - 1));
      this.take(buf, i, keep);
      this.carry = Buffer.from(buf.subarray(keep));
      return -1;
    }
    this.take(buf, i, at);
    if (this.state === 'content') this.endPart();
    this.state = 'after-delimiter';
    return at + this.delimiter.length;
  }

  private scanAfterDelimiter(buf: Buffer, i: number): number {
    if (buf.length - i < 2) {
      this.carry = Buffer.from(buf.subarray(i));
      return -1;
    }
    const [a, b] = [buf[i], buf[i + 1]];
    if (a === DASH && b === DASH) {
      this.state = 'done';
      return i + 2;
    }
    // busboy accepts no transport padding after a delimiter either.
    if (a !== CR || b !== LF)
      throw new UploadError('UPLOAD_MALFORMED', 'unexpected bytes after a part delimiter');
    // SPEC.md §5.3: after `body` and `stream` any part is unexpected, the code a first unknown part gets.
    if (++this.parts > MAX_PARTS) {
      throw new UploadError(
        'UPLOAD_UNKNOWN_PART',
        `a form has at most ${MAX_PARTS} parts (body and stream); a third part is not allowed`,
      );
    }
    this.state = 'headers';
    return i; // the CRLF stays, so an empty header block is found as CRLF CRLF
  }

  private scanHeaders(buf: Buffer, i: number): number {
    const end = buf.indexOf(CRLF_CRLF, i);
    const size = (end < 0 ? buf.length : end) - i - 2;
    if (size > MAX_PART_HEADER_BYTES) {
      throw new UploadError(
        'UPLOAD_HEADERS_LIMIT',
        `a part header block exceeds ${MAX_PART_HEADER_BYTES} bytes`,
      );
    }
    // A delimiter inside a header block would be read differently by busboy: refuse it.
    const delimiterAt = buf.indexOf(this.delimiter, i);
    if (delimiterAt >= 0 && (end < 0 || delimiterAt < end)) {
      throw new UploadError('UPLOAD_MALFORMED', 'a part header block contains a delimiter');
    }
    if (end < 0) {
      this.carry = Buffer.from(buf.subarray(i));
      return -1;
    }
    const lines = end === i ? [] : buf.toString('latin1', i + 2, end).split('\r\n');
    const capture = this.hooks.onPartHeaders(lines);
    this.captured = capture ? [] : undefined;
    this.capturedBytes = 0;
    this.state = 'content';
    this.contentStart = true;
    return end + 2; // the block's last CRLF stays in view: see scanContent
  }

  /**
   * Content that begins with `--boundary` is refused: some parsers (busboy among them) take the header block's
   * last CRLF as the start of a delimiter there, and would read a different form. `i` is at that CRLF; it is
   * never content.
   * @returns where content starts, or -1 after keeping the bytes in `carry` (not enough to decide yet).
   */
  private leaveHeaderEnd(buf: Buffer, i: number): number {
    const n = Math.min(buf.length - i, this.delimiter.length);
    if (buf.compare(this.delimiter, 0, n, i, i + n) === 0) {
      if (n < this.delimiter.length) {
        this.carry = Buffer.from(buf.subarray(i));
        return -1;
      }
      throw new UploadError('UPLOAD_MALFORMED', "a part's content starts with a delimiter");
    }
    this.contentStart = false;
    return i + 2;
  }

  /** Content bytes [from, to) that certainly belong to the current part. */
  private take(buf: Buffer, from: number, to: number): void {
    if (to <= from) return;
    if (this.state === 'content') this.hooks.onPartContent?.(buf, from, to);
    if (this.captured === undefined) return;
    this.capturedBytes += to - from;
    // Exact: `take` never sees bytes that could still be a delimiter, so this is the content length (S17).
    if (this.capturedBytes > this.captureLimit) {
      throw new UploadError('UPLOAD_FIELD_TOO_LARGE', `the body part exceeds ${this.captureLimit} bytes`, {
        details: { limit: this.captureLimit },
      });
    }
    this.captured.push(Buffer.from(buf.subarray(from, to)));
  }

  private endPart(): void {
    const captured =
      this.captured === undefined ? undefined : Buffer.concat(this.captured, this.capturedBytes);
    this.captured = undefined;
    this.hooks.onPartEnd(captured);
  }
}
