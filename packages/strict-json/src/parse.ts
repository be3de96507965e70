import { StrictJsonError, type StrictJsonErrorCode } from './errors.js';

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
// A run of string characters that need no attention: not a quote, backslash or control character.
// eslint-disable-next-line no-control-regex -- control characters end the run on purpose
const PLAIN_RUN = /[^"\\\u0000-\u001f]*/y;
/** Strings longer than this are scanned with {@link PLAIN_RUN} after a first stretch scanned by hand. */
const HAND_SCAN = 64;
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;
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
  const fromString = typeof input === 'string';
  const text = fromString ? checkString(input, maxBytes) : decodeBytes(input, maxBytes);
  if (text.charCodeAt(0) === 0xfeff)
    throw new StrictJsonError('JSON_INVALID', 'a byte order mark is not allowed', 0);
  const p = new Parser(
    text,
    options.maxDepth ?? MAX_JSON_DEPTH,
    options.integersOnly ?? false,
    options.newObject ?? nullObject,
    // Text decoded from valid UTF-8 holds no raw lone surrogate; a string input may.
    fromString,
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

function hexValue(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  const l = c | 0x20;
  return l >= 0x61 && l <= 0x66 ? l - 0x57 : -1;
}

/**
 * One pass over the text with `charCodeAt`, building the value as it goes: no regular expression or substring per
 * token except for long string runs and numbers that are not short integers.
 */
class Parser {
  i = 0;
  constructor(
    readonly s: string,
    readonly maxDepth: number,
    readonly integersOnly: boolean,
    readonly newObject: () => JsonObject,
    readonly rawSurrogates: boolean,
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
    const s = this.s;
    const c = s.charCodeAt(this.i);
    if (c === 0x22) return this.string();
    if (c === 0x7b) return this.object(depth + 1);
    if (c === 0x5b) return this.array(depth + 1);
    if (c === 0x2d || (c >= 0x30 && c <= 0x39)) return this.number();
    if (c === 0x74 && s.startsWith('true', this.i)) return this.literal(4, true);
    if (c === 0x66 && s.startsWith('false', this.i)) return this.literal(5, false);
    if (c === 0x6e && s.startsWith('null', this.i)) return this.literal(4, null);
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
    const s = this.s;
    if (s.charCodeAt(this.i) === 0x7d) return this.literal(1, out);
    for (;;) {
      if (s.charCodeAt(this.i) !== 0x22) this.error('expected a property name in double quotes');
      const start = this.i;
      const key = this.string();
      // Values are never undefined and objects inherit no key (newObject's contract): a plain read suffices.
      if (out[key] !== undefined) {
        this.i = start;
        this.error(`duplicate property name ${quoteKey(key)}`, 'JSON_DUPLICATE_KEY');
      }
      let c = s.charCodeAt(this.i);
      if (c !== 0x3a) {
        this.skipWs();
        c = s.charCodeAt(this.i);
        if (c !== 0x3a) this.error("expected ':' after a property name");
      }
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
    const s = this.s;
    let c = s.charCodeAt(this.i);
    if (c !== close && c !== 0x2c) {
      this.skipWs();
      c = s.charCodeAt(this.i);
    }
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
    const start = this.i + 1;
    let i = start;
    let c = s.charCodeAt(i);
    // The common case: a short string without escapes, scanned by hand and returned as one slice.
    const handEnd = start + HAND_SCAN;
    // `!(c >= 0x20)` also stops at the end of the text (NaN).
    while (c !== 0x22 && c !== 0x5c && c >= 0x20 && i < handEnd) c = s.charCodeAt(++i);
    if (c === 0x22) {
      const out = s.slice(start, i);
      this.i = i + 1;
      if (this.rawSurrogates && !isWellFormed(out))
        this.error('string contains a lone surrogate', 'JSON_LONE_SURROGATE');
      return out;
    }
    return this.longString(start, i);
  }

  /** A string with escapes or a long one: plain runs by {@link PLAIN_RUN}, escapes decoded one by one. */
  longString(start: number, from: number): string {
    const s = this.s;
    let out = s.slice(start, from);
    let i = from;
    let check = this.rawSurrogates;
    for (;;) {
      PLAIN_RUN.lastIndex = i;
      PLAIN_RUN.test(s);
      const j = PLAIN_RUN.lastIndex;
      if (j > i) out += s.slice(i, j);
      this.i = j;
      const c = s.charCodeAt(j);
      if (c === 0x22) break;
      if (c !== 0x5c) this.error('unterminated string or control character in a string');
      const unit = this.escape();
      if (unit >= 0xd800 && unit <= 0xdfff) check = true;
      out += String.fromCharCode(unit);
      i = this.i;
    }
    this.i++;
    // Pairs may be escaped (\ud83d\ude00) or literal; only a half left alone is refused.
    if (check && !isWellFormed(out)) this.error('string contains a lone surrogate', 'JSON_LONE_SURROGATE');
    return out;
  }

  /** Decodes the escape at `this.i` (a backslash) to one UTF-16 unit and moves past it. */
  escape(): number {
    const s = this.s;
    const e = s.charCodeAt(this.i + 1);
    let unit = -1;
    switch (e) {
      case 0x22: // "
      case 0x5c: // \
      case 0x2f: // /
        unit = e;
        break;
      case 0x62: // b
        unit = 0x08;
        break;
      case 0x66: // f
        unit = 0x0c;
        break;
      case 0x6e: // n
        unit = 0x0a;
        break;
      case 0x72: // r
        unit = 0x0d;
        break;
      case 0x74: // t
        unit = 0x09;
        break;
      case 0x75: {
        // u: exactly four hex digits
        const a = hexValue(s.charCodeAt(this.i + 2));
        const b = hexValue(s.charCodeAt(this.i + 3));
        const c = hexValue(s.charCodeAt(this.i + 4));
        const d = hexValue(s.charCodeAt(this.i + 5));
        if ((a | b | c | d) < 0) this.error('invalid escape sequence in a string');
        this.i += 6;
        return (a << 12) | (b << 8) | (c << 4) | d;
      }
    }
    if (unit < 0) this.error('invalid escape sequence in a string');
    this.i += 2;
    return unit;
  }

  number(): number {
    const s = this.s;
    const start = this.i;
    let i = start;
    let c = s.charCodeAt(i);
    const negative = c === 0x2d;
    if (negative) c = s.charCodeAt(++i);
    let v = 0;
    if (c === 0x30) c = s.charCodeAt(++i);
    else if (c >= 0x31 && c <= 0x39) {
      do {
        v = v * 10 + (c - 0x30);
        c = s.charCodeAt(++i);
      } while (c >= 0x30 && c <= 0x39);
    } else return this.error('invalid number');
    const intEnd = i;
    // A fraction or an exponent counts only with at least one digit (otherwise the text after it is refused).
    if (c === 0x2e) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0x30 && d <= 0x39) {
        i += 2;
        c = s.charCodeAt(i);
        while (c >= 0x30 && c <= 0x39) c = s.charCodeAt(++i);
      }
    }
    if (c === 0x65 || c === 0x45) {
      let k = i + 1;
      let d = s.charCodeAt(k);
      if (d === 0x2b || d === 0x2d) d = s.charCodeAt(++k);
      if (d >= 0x30 && d <= 0x39) {
        do d = s.charCodeAt(++k);
        while (d >= 0x30 && d <= 0x39);
        i = k;
      }
    }
    const integerForm = i === intEnd;
    // Up to 15 digits the sum above is exact; anything else is converted by Number() from the token.
    if (!integerForm || intEnd - start - (negative ? 1 : 0) > 15) {
      v = Number(s.slice(start, i));
      if (!Number.isFinite(v) || (Number.isInteger(v) && !Number.isSafeInteger(v))) {
        this.error('number is outside the exactly representable integer range ±(2^53-1)', 'JSON_BAD_NUMBER');
      }
    } else if (negative) v = -v;
    if (this.integersOnly && (!integerForm || Object.is(v, -0))) {
      this.error('only integers are allowed, without fraction, exponent or minus zero', 'JSON_BAD_NUMBER');
    }
    this.i = i;
    return v;
  }
}
