import { OappError } from './errors.js';

// Strict JSON for everything inside the format (SPEC.md §4.1, security-requirements A.1
// "Strict JSON"): fatal UTF-8, no BOM, duplicate keys rejected, lone surrogates rejected,
// depth and size capped, objects created without a prototype (so "__proto__" is a plain key).
// A hand-written parser: JSON.parse silently keeps the last duplicate and accepts lone surrogates.

/** Options of {@link parseStrictJson}. */
export interface ParseStrictJsonOptions {
  /** Name of the thing parsed, for messages (`HEADER`, `STATEMENT`). */
  what: string;
  /** Byte cap, checked before decoding. */
  maxBytes: number;
  /** Nesting cap (objects and arrays). Default 64. */
  maxDepth?: number;
  /** Reject numbers with a fraction or exponent, and integers beyond ±(2^53 − 1). */
  integersOnly?: boolean;
}

const fatalUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * Parses UTF-8 JSON bytes strictly.
 * @throws {@link OappError} `FORMAT_SECTION_TOO_LARGE`, `FORMAT_BAD_UTF8`, `FORMAT_JSON_INVALID`,
 *   `FORMAT_JSON_DUPLICATE_KEY`, `FORMAT_JSON_TOO_DEEP`.
 */
export function parseStrictJson(bytes: Uint8Array, options: ParseStrictJsonOptions): unknown {
  const { what, maxBytes } = options;
  if (bytes.length > maxBytes) {
    throw new OappError(
      'FORMAT_SECTION_TOO_LARGE',
      `${what} is ${bytes.length} bytes, the limit is ${maxBytes}`,
    );
  }
  let text: string;
  try {
    text = fatalUtf8.decode(bytes);
  } catch (cause) {
    throw new OappError('FORMAT_BAD_UTF8', `${what} is not valid UTF-8`, { cause });
  }
  if (text.charCodeAt(0) === 0xfeff)
    throw new OappError('FORMAT_JSON_INVALID', `${what} starts with a byte order mark`);
  return new Parser(text, what, options.maxDepth ?? 64, options.integersOnly ?? false).parseDocument();
}

const WS = new Set([0x20, 0x09, 0x0a, 0x0d]);
const ESCAPES: Readonly<Record<string, string>> = {
  '"': '"',
  '\\': '\\',
  '/': '/',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
};
const NUMBER_RE = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;

class Parser {
  private i = 0;
  constructor(
    private readonly s: string,
    private readonly what: string,
    private readonly maxDepth: number,
    private readonly integersOnly: boolean,
  ) {}

  parseDocument(): unknown {
    const v = this.value(0);
    this.ws();
    if (this.i !== this.s.length) this.fail('unexpected data after the JSON value');
    return v;
  }

  private fail(why: string): never {
    throw new OappError('FORMAT_JSON_INVALID', `${this.what} is not valid JSON: ${why} at offset ${this.i}`);
  }

  private ws(): void {
    while (this.i < this.s.length && WS.has(this.s.charCodeAt(this.i))) this.i++;
  }

  private value(depth: number): unknown {
    this.ws();
    const c = this.s[this.i];
    if (c === '{') return this.object(depth + 1);
    if (c === '[') return this.array(depth + 1);
    if (c === '"') return this.string();
    if (c === 't') return this.literal('true', true);
    if (c === 'f') return this.literal('false', false);
    if (c === 'n') return this.literal('null', null);
    return this.number();
  }

  private enter(depth: number): void {
    if (depth > this.maxDepth) {
      throw new OappError('FORMAT_JSON_TOO_DEEP', `${this.what} nests deeper than ${this.maxDepth} levels`);
    }
  }

  private object(depth: number): Record<string, unknown> {
    this.enter(depth);
    const out = Object.create(null) as Record<string, unknown>;
    const seen = new Set<string>();
    this.i++;
    this.ws();
    if (this.s[this.i] === '}') {
      this.i++;
      return out;
    }
    for (;;) {
      this.ws();
      if (this.s[this.i] !== '"') this.fail('expected a string key');
      const key = this.string();
      if (seen.has(key)) {
        throw new OappError(
          'FORMAT_JSON_DUPLICATE_KEY',
          `${this.what} has the key ${JSON.stringify(key.slice(0, 40))} twice`,
        );
      }
      seen.add(key);
      this.ws();
      if (this.s[this.i] !== ':') this.fail('expected ":"');
      this.i++;
      out[key] = this.value(depth);
      this.ws();
      const c = this.s[this.i++];
      if (c === '}') return out;
      if (c !== ',') this.fail('expected "," or "}"');
    }
  }

  private array(depth: number): unknown[] {
    this.enter(depth);
    const out: unknown[] = [];
    this.i++;
    this.ws();
    if (this.s[this.i] === ']') {
      this.i++;
      return out;
    }
    for (;;) {
      out.push(this.value(depth));
      this.ws();
      const c = this.s[this.i++];
      if (c === ']') return out;
      if (c !== ',') this.fail('expected "," or "]"');
    }
  }

  private literal(word: string, v: unknown): unknown {
    if (!this.s.startsWith(word, this.i)) this.fail('unknown literal');
    this.i += word.length;
    return v;
  }

  private number(): number {
    NUMBER_RE.lastIndex = this.i;
    const m = NUMBER_RE.exec(this.s);
    if (m === null) this.fail('unexpected character');
    const token = m[0];
    this.i += token.length;
    const n = Number(token);
    if (this.integersOnly && (!/^(?:0|-?[1-9][0-9]*)$/.test(token) || !Number.isSafeInteger(n))) {
      this.fail(
        'only integers from -(2^53 - 1) to 2^53 - 1 are allowed, without fraction, exponent or minus zero',
      );
    }
    return n;
  }

  private string(): string {
    this.i++; // opening quote
    let out = '';
    for (;;) {
      const code = this.s.charCodeAt(this.i);
      if (Number.isNaN(code)) this.fail('unterminated string');
      if (code === 0x22) {
        this.i++;
        return out;
      }
      if (code < 0x20) this.fail('control character in string');
      if (code === 0x5c) {
        out += this.escape();
        continue;
      }
      // Raw surrogates cannot occur: the text came from fatal UTF-8 decoding.
      out += this.s[this.i++];
    }
  }

  private escape(): string {
    const c = this.s[this.i + 1] ?? '';
    this.i += 2;
    const simple = ESCAPES[c];
    if (simple !== undefined) return simple;
    if (c !== 'u') this.fail('bad escape');
    const hi = this.hex4();
    if (hi >= 0xdc00 && hi <= 0xdfff) this.fail('lone surrogate');
    if (hi < 0xd800 || hi > 0xdbff) return String.fromCharCode(hi);
    if (this.s[this.i] !== '\\' || this.s[this.i + 1] !== 'u') this.fail('lone surrogate');
    this.i += 2;
    const lo = this.hex4();
    if (lo < 0xdc00 || lo > 0xdfff) this.fail('lone surrogate');
    return String.fromCharCode(hi, lo);
  }

  private hex4(): number {
    const h = this.s.slice(this.i, this.i + 4);
    if (!/^[0-9a-fA-F]{4}$/.test(h)) this.fail('bad \\u escape');
    this.i += 4;
    return parseInt(h, 16);
  }
}
