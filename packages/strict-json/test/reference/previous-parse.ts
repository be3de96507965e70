import { StrictJsonError, type StrictJsonErrorCode } from '../../src/errors.js';

/** Default nesting cap of arrays and objects. */
export const MAX_JSON_DEPTH = 64;

/** A parsed JSON value. Objects inherit nothing, so `__proto__` and `constructor` are plain data keys. */
export type JsonValue = null | boolean | number | string | JsonValue[] | JsonObject;
/** A parsed JSON object. */
export interface JsonObject {
  [key: string]: JsonValue;
}

/** Options of {@link parseStrictJson}. */
export interface ParseStrictJsonOptions {
  /** Largest accepted input in UTF-8 bytes; checked before decoding (a string is measured as UTF-8). */
  maxBytes: number;
  /** Deepest accepted nesting of arrays and objects. Default {@link MAX_JSON_DEPTH}. */
  maxDepth?: number;
  /** Also reject numbers with a fraction or exponent, and minus zero. Default false. */
  integersOnly?: boolean;
  /** Makes each object (default `Object.create(null)`). It must return an empty object that inherits no key. */
  newObject?: () => JsonObject;
}

const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const INTEGER = /^(?:0|-?[1-9][0-9]*)$/;
// A run of string characters that need no attention: not a quote, backslash or control character.
// eslint-disable-next-line no-control-regex -- control characters end the run on purpose
const PLAIN_RUN = /[^"\\\u0000-\u001f]*/y;
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;
const ESCAPES: Readonly<Record<string, string>> = Object.freeze({
  '"': '"',
  '\\': '\\',
  '/': '/',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
});
const nullObject = (): JsonObject => Object.create(null) as JsonObject;

/**
 * Parses RFC 8259 JSON strictly: fatal UTF-8, no byte order mark, no duplicate keys (compared after unescaping),
 * no lone surrogates, bounded size and depth, numbers exactly representable (integers within ±(2^53 − 1)).
 * Objects come from `options.newObject` (prototype-less by default), so `__proto__` is a plain key. A hand-written
 * parser because `JSON.parse` keeps the last duplicate and accepts lone surrogates.
 *
 * @throws StrictJsonError `JSON_TOO_LARGE`, `JSON_BAD_UTF8`, `JSON_INVALID`, `JSON_DUPLICATE_KEY`,
 *   `JSON_LONE_SURROGATE`, `JSON_TOO_DEEP`, `JSON_BAD_NUMBER`.
 */
export function parseStrictJson(input: Uint8Array | string, options: ParseStrictJsonOptions): JsonValue {
  const { maxBytes } = options;
  const text = typeof input === 'string' ? checkString(input, maxBytes) : decodeBytes(input, maxBytes);
  if (text.charCodeAt(0) === 0xfeff)
    throw new StrictJsonError('JSON_INVALID', 'a byte order mark is not allowed', 0);
  const p = new Parser(
    text,
    options.maxDepth ?? MAX_JSON_DEPTH,
    options.integersOnly ?? false,
    options.newObject ?? nullObject,
  );
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
    throw new StrictJsonError('JSON_BAD_UTF8', 'input is not valid UTF-8', 0, { cause });
  }
}

function tooLarge(maxBytes: number): never {
  throw new StrictJsonError('JSON_TOO_LARGE', `JSON text is larger than ${maxBytes} bytes`, 0);
}

function quoteKey(name: string): string {
  return JSON.stringify(name.length > 64 ? `${name.slice(0, 64)}…` : name);
}

const nativeIsWellFormed = (String.prototype as { isWellFormed?: (this: string) => boolean }).isWellFormed;
function isWellFormed(s: string): boolean {
  return nativeIsWellFormed !== undefined ? nativeIsWellFormed.call(s) : !LONE_SURROGATE.test(s);
}

class Parser {
  i = 0;
  constructor(
    readonly s: string,
    readonly maxDepth: number,
    readonly integersOnly: boolean,
    readonly newObject: () => JsonObject,
  ) {}

  error(reason: string, code: StrictJsonErrorCode = 'JSON_INVALID'): never {
    throw new StrictJsonError(code, this.i >= this.s.length ? 'unexpected end of JSON text' : reason, this.i);
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

  /** Checks the depth before descending, so 100 000 open brackets fail without a stack overflow. */
  enter(depth: number): void {
    if (depth > this.maxDepth) this.error(`nesting deeper than ${this.maxDepth} levels`, 'JSON_TOO_DEEP');
    this.i++;
    this.skipWs();
  }

  object(depth: number): JsonObject {
    this.enter(depth);
    const out = this.newObject();
    if (this.s.charCodeAt(this.i) === 0x7d) return this.literal(1, out);
    for (;;) {
      if (this.s.charCodeAt(this.i) !== 0x22) this.error('expected a property name in double quotes');
      const start = this.i;
      const key = this.string();
      // Values are never undefined and objects inherit no key (newObject's contract): a plain read suffices.
      if (out[key] !== undefined) {
        this.i = start;
        this.error(`duplicate property name ${quoteKey(key)}`, 'JSON_DUPLICATE_KEY');
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
    if (c === close) {
      this.i++;
      return true;
    }
    if (c !== 0x2c) this.error(`expected ',' or '${String.fromCharCode(close)}'`);
    this.i++;
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
      this.i = j;
      const c = s.charCodeAt(j);
      if (c === 0x22) break;
      if (c !== 0x5c) this.error('unterminated string or control character in a string');
      out += this.escape();
      i = this.i;
    }
    this.i++;
    // Pairs may be escaped (\ud83d\ude00) or literal; only a half left alone is refused.
    if (!isWellFormed(out)) this.error('string contains a lone surrogate', 'JSON_LONE_SURROGATE');
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
    const token = m[0];
    const v = Number(token);
    if (!Number.isFinite(v) || (Number.isInteger(v) && !Number.isSafeInteger(v))) {
      this.error('number is outside the exactly representable integer range ±(2^53-1)', 'JSON_BAD_NUMBER');
    }
    if (this.integersOnly && !INTEGER.test(token)) {
      this.error('only integers are allowed, without fraction, exponent or minus zero', 'JSON_BAD_NUMBER');
    }
    this.i += token.length;
    return v;
  }
}
