import { WorkflowError, type WorkflowErrorCode } from './errors.js';
import { isWellFormedString } from './internal/well-formed.js';
import { emptyObject, MAX_JSON_DEPTH, quoteName, type JsonObject, type JsonValue } from './json-value.js';

/** Default byte cap for one JSON document (8 MiB). */
export const MAX_JSON_BYTES = 8 * 1024 * 1024;

/** Options of {@link parseStrictJson}. */
export interface ParseStrictJsonOptions {
  /** Largest accepted input in bytes (UTF-8). Default {@link MAX_JSON_BYTES}. */
  maxBytes?: number;
  /** Deepest accepted nesting of arrays and objects. Default {@link MAX_JSON_DEPTH} (64). */
  maxDepth?: number;
}

const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
// A run of string characters that need no attention: not a quote, backslash or control character.
// eslint-disable-next-line no-control-regex -- control characters end the run on purpose
const PLAIN_RUN = /[^"\\\u0000-\u001f]*/y;
const ESCAPES: Record<string, string> = {
  '"': '"',
  '\\': '\\',
  '/': '/',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
};

/**
 * Parses RFC 8259 JSON text strictly (SPEC.md §3): fatal UTF-8, no BOM, no duplicate keys, no lone surrogates,
 * bounded depth and size, integers within ±(2^53−1). Objects come back inheriting nothing (see `emptyObject`), so `__proto__`
 * and `constructor` are plain data keys (S4).
 *
 * @throws WorkflowError `WORKFLOW_JSON_TOO_LARGE`, `WORKFLOW_JSON_BAD_UTF8`, `WORKFLOW_JSON_INVALID`,
 *   `WORKFLOW_JSON_DUPLICATE_KEY`, `WORKFLOW_JSON_LONE_SURROGATE`, `WORKFLOW_JSON_TOO_DEEP`, `WORKFLOW_JSON_BAD_NUMBER`.
 */
export function parseStrictJson(input: Uint8Array | string, options: ParseStrictJsonOptions = {}): JsonValue {
  const maxBytes = options.maxBytes ?? MAX_JSON_BYTES;
  const text = typeof input === 'string' ? checkString(input, maxBytes) : decodeBytes(input, maxBytes);
  if (text.charCodeAt(0) === 0xfeff) fail('WORKFLOW_JSON_INVALID', 'a byte order mark is not allowed', 0);
  const p = new Parser(text, options.maxDepth ?? MAX_JSON_DEPTH);
  p.skipWs();
  const value = p.value(0);
  p.skipWs();
  if (p.i !== text.length) p.error('unexpected data after the JSON value');
  return value;
}

function checkString(s: string, maxBytes: number): string {
  // A UTF-16 unit encodes to at most 3 UTF-8 bytes; count exactly only when the quick bound is inconclusive.
  if (s.length * 3 > maxBytes && Buffer.byteLength(s, 'utf8') > maxBytes) tooLarge(maxBytes);
  return s;
}

function decodeBytes(bytes: Uint8Array, maxBytes: number): string {
  if (bytes.byteLength > maxBytes) tooLarge(maxBytes);
  try {
    return decoder.decode(bytes);
  } catch (cause) {
    throw new WorkflowError('WORKFLOW_JSON_BAD_UTF8', 'input is not valid UTF-8', { cause });
  }
}

function tooLarge(maxBytes: number): never {
  throw new WorkflowError('WORKFLOW_JSON_TOO_LARGE', `JSON text is larger than ${maxBytes} bytes`);
}

function fail(code: WorkflowErrorCode, what: string, offset: number): never {
  throw new WorkflowError(code, `${what} (at character ${offset})`, {
    details: [{ pointer: '', detail: what }],
  });
}

class Parser {
  i = 0;
  constructor(
    readonly s: string,
    readonly maxDepth: number,
  ) {}

  error(what: string, code: WorkflowErrorCode = 'WORKFLOW_JSON_INVALID'): never {
    fail(code, this.i >= this.s.length ? 'unexpected end of JSON text' : what, this.i);
  }

  skipWs(): void {
    const s = this.s;
    let c = s.charCodeAt(this.i);
    while (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) c = s.charCodeAt(++this.i);
  }

  value(depth: number): JsonValue {
    const c = this.s.charCodeAt(this.i);
    if (c === 0x22) return this.string();
    if (c === 0x7b) return this.object(depth + 1);
    if (c === 0x5b) return this.array(depth + 1);
    if (c === 0x2d || (c >= 0x30 && c <= 0x39)) return this.number();
    if (this.s.startsWith('true', this.i)) return this.literal(4, true);
    if (this.s.startsWith('false', this.i)) return this.literal(5, false);
    if (this.s.startsWith('null', this.i)) return this.literal(4, null);
    return this.error('unexpected character, expected a JSON value');
  }

  literal<T>(len: number, v: T): T {
    this.i += len;
    return v;
  }

  enter(depth: number): void {
    if (depth > this.maxDepth)
      this.error(`nesting deeper than ${this.maxDepth} levels`, 'WORKFLOW_JSON_TOO_DEEP');
    this.i++;
    this.skipWs();
  }

  object(depth: number): JsonObject {
    this.enter(depth);
    const out = emptyObject();
    if (this.s.charCodeAt(this.i) === 0x7d) return this.literal(1, out);
    for (;;) {
      if (this.s.charCodeAt(this.i) !== 0x22) this.error('expected a property name in double quotes');
      const start = this.i;
      const key = this.string();
      if (out[key] !== undefined) {
        this.i = start;
        this.error(`duplicate property name ${quoteName(key)}`, 'WORKFLOW_JSON_DUPLICATE_KEY');
      }
      this.skipWs();
      if (this.s.charCodeAt(this.i) !== 0x3a) this.error("expected ':' after a property name");
      this.i++;
      this.skipWs();
      out[key] = this.value(depth);
      if (this.separator(0x7d)) return out;
    }
  }

  array(depth: number): JsonValue[] {
    this.enter(depth);
    const out: JsonValue[] = [];
    if (this.s.charCodeAt(this.i) === 0x5d) return this.literal(1, out);
    for (;;) {
      out.push(this.value(depth));
      if (this.separator(0x5d)) return out;
    }
  }

  /** After a member: consumes `,` (returns false) or the closing bracket (returns true). */
  separator(close: number): boolean {
    this.skipWs();
    const c = this.s.charCodeAt(this.i);
    this.i++;
    if (c === close) return true;
    if (c !== 0x2c) {
      this.i--;
      this.error(`expected ',' or '${String.fromCharCode(close)}'`);
    }
    this.skipWs();
    return false;
  }

  string(): string {
    const s = this.s;
    let i = this.i + 1;
    let out = '';
    for (;;) {
      PLAIN_RUN.lastIndex = i;
      PLAIN_RUN.test(s);
      const j = PLAIN_RUN.lastIndex;
      out += s.slice(i, j);
      const c = s.charCodeAt(j);
      this.i = j;
      if (c === 0x22) break;
      if (c !== 0x5c) this.error('unterminated string or control character in a string');
      out += this.escape();
      i = this.i;
    }
    this.i++;
    if (!isWellFormedString(out))
      this.error('string contains a lone surrogate', 'WORKFLOW_JSON_LONE_SURROGATE');
    return out;
  }

  escape(): string {
    const e = this.s[this.i + 1] ?? '';
    const simple = ESCAPES[e];
    if (simple !== undefined) {
      this.i += 2;
      return simple;
    }
    const hex = this.s.slice(this.i + 2, this.i + 6);
    if (e !== 'u' || !/^[0-9a-fA-F]{4}$/.test(hex)) this.error('invalid escape sequence in a string');
    this.i += 6;
    return String.fromCharCode(parseInt(hex, 16));
  }

  number(): number {
    NUMBER.lastIndex = this.i;
    const m = NUMBER.exec(this.s);
    if (m === null) return this.error('invalid number');
    const v = Number(m[0]);
    if (!Number.isFinite(v) || (Number.isInteger(v) && !Number.isSafeInteger(v))) {
      this.error(
        'number is outside the exactly representable integer range ±(2^53-1)',
        'WORKFLOW_JSON_BAD_NUMBER',
      );
    }
    this.i += m[0].length;
    return v;
  }
}
