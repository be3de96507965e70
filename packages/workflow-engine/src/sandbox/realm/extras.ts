/**
 * Sandbox-side `bytes()`, `crypto()` and `doc` (docs/interfaces.md §5.1, §5.7), made fresh for every run by the helper
 * factory (`util-factory.ts`), which the context prelude compiles on first use. `env` carries the prelude's host
 * call and run-state accessors.
 */
import { badArgument, integerArg, notA, textArg } from './args.js';
import { createCompression } from './compress.js';
import { createCrypto } from './crypto.js';
import type { UtilEnv } from './types.js';
import {
  byteTarget,
  concat,
  fromBase64,
  fromHex,
  memoryReader,
  toBase64,
  toBytes,
  toHex,
  utf8Decode,
  utf8Encode,
  validate,
} from './util.js';

/** What `doc.inSchema(…)…` collects before `run(fn)`. */
interface DocSpec {
  description?: string;
  inSchema?: unknown;
  dataSchema?: unknown;
  outSchema?: unknown;
  inPropertySchema?: unknown;
  outPropertySchema?: unknown;
  user?: boolean;
}

/** The builder `doc.description(…)` and the others return. */
export interface DocBuilder {
  description(t: unknown): DocBuilder;
  inSchema(x: unknown): DocBuilder;
  dataSchema(x: unknown): DocBuilder;
  outSchema(x: unknown): DocBuilder;
  inPropertySchema(x: unknown): DocBuilder;
  outPropertySchema(x: unknown): DocBuilder;
  asUserErrors(): DocBuilder;
  run(fn: unknown): unknown;
}

/** The longest buffer QuickJS makes (a longer `new Uint8Array(n)` is a RangeError; a shorter one may run out of memory). */
const MAX_BUFFER_BYTES = 2 ** 31 - 1;

/** An index into `b`: an integer from 0 to its last byte. */
const indexArg = (i: unknown, b: Uint8Array, what: string): number => integerArg(i, what, 0, b.length - 1);

export function createExtras(env: UtilEnv) {
  const bytes = {
    create(n: unknown) {
      return new Uint8Array(integerArg(n, 'create: n', 0, MAX_BUFFER_BYTES));
    },
    createFrom(x: unknown) {
      return toBytes(x, 'createFrom: x').slice();
    },
    createFromString(s: unknown) {
      return utf8Encode(textArg(s, 'createFromString: s'));
    },
    createFromByteArray(a: unknown) {
      return toBytes(a, 'createFromByteArray: a').slice();
    },
    copy(b: unknown) {
      return toBytes(b, 'copy: b').slice();
    },
    concat(a: unknown, b: unknown) {
      return concat(a, b);
    },
    writeBytes(dst: unknown, off: unknown, src: unknown) {
      const d = byteTarget(dst, 'writeBytes: dst'),
        s = toBytes(src, 'writeBytes: src');
      if (s.length > d.length)
        throw badArgument(
          'writeBytes: src (' + s.length + ' bytes) is longer than dst (' + d.length + ' bytes)',
        );
      d.set(s, integerArg(off, 'writeBytes: off', 0, d.length - s.length));
      return d;
    },
    writeByte(b: unknown, i: unknown, v: unknown) {
      const d = byteTarget(b, 'writeByte: b');
      // A signed (Java) or an unsigned byte: -1 and 255 are the same byte.
      d[indexArg(i, d, 'writeByte: i')] = integerArg(v, 'writeByte: v', -128, 255) & 255;
      return d;
    },
    readByte(b: unknown, i: unknown) {
      const d = toBytes(b, 'readByte: b');
      return d[indexArg(i, d, 'readByte: i')];
    },
    getSize(b: unknown) {
      return toBytes(b, 'getSize: b').length;
    },
    hexToBinary: (h: unknown) => fromHex(h),
    binaryToHex: (b: unknown) => toHex(b),
    base64ToBinary: (s: unknown) => fromBase64(s),
    binaryToBase64: (b: unknown) => toBase64(b),
    toString(b: unknown) {
      return utf8Decode(toBytes(b, 'toString: b'));
    },
    sha256(b: unknown) {
      return new Uint8Array(env.call('sha256', [], toBytes(b, 'sha256: b').slice().buffer) as ArrayBuffer);
    },
    reader(b?: unknown) {
      return b === undefined ? env.streamReader() : memoryReader(b);
    },
    release() {},
    ...createCompression(env),
  };
  const crypto = createCrypto(env);
  // docs/interfaces.md §5.1: validates the input body, the processor data, the output body, and the run properties before
  // and after `run` (inPropertySchema / outPropertySchema); asUserErrors() turns a failure into a 400 answer for the
  // caller instead of a processor error.
  function docCheck(spec: DocSpec, schema: unknown, json: string | null, what: string): void {
    if (!schema) return;
    let value: unknown, err: string | null | undefined;
    try {
      value = env.parse(json as string);
    } catch {
      err = what + ' is not JSON';
    }
    docFail(spec, err || validate(schema, value, what, 0));
  }
  /** The run properties as an object of strings (removed ones left out), for the property schemas. */
  function properties(): Record<string, string> {
    const out = Object.create(null) as Record<string, string>; // a property named __proto__ stays a property
    const p = env.S.properties;
    for (const k of Object.keys(p)) {
      const v = p[k];
      if (typeof v === 'string') out[k] = v;
    }
    return out;
  }
  function docPropertyCheck(spec: DocSpec, schema: unknown, what: string): void {
    if (schema) docFail(spec, validate(schema, properties(), what, 0));
  }
  function docFail(spec: DocSpec, err: string | null | undefined): void {
    if (!err) return;
    if (spec.user) {
      env.S.properties.status_code = '400';
      env.setBodyValue({ error: err });
      env.S.ended = true;
      const stop = new Error('doc: ' + err) as Error & { docUserError?: boolean };
      stop.docUserError = true;
      throw stop;
    }
    throw new Error('doc: ' + err);
  }
  function docRun(spec: DocSpec, fn: unknown): unknown {
    try {
      docCheck(spec, spec.inSchema, env.getBodyString(), 'body');
      docCheck(spec, spec.dataSchema, env.stringify(env.S.data), 'data');
      docPropertyCheck(spec, spec.inPropertySchema, 'properties');
      const out = (fn as () => unknown)();
      docCheck(spec, spec.outSchema, env.getBodyString(), 'output');
      docPropertyCheck(spec, spec.outPropertySchema, 'output properties');
      return out;
    } catch (e) {
      if (e && (e as { docUserError?: unknown }).docUserError) return undefined;
      throw e;
    }
  }
  function makeDoc(): DocBuilder {
    const spec: DocSpec = {};
    const d: DocBuilder = {
      description(t) {
        spec.description = textArg(t, 'doc.description: t');
        return d;
      },
      inSchema(x) {
        spec.inSchema = x;
        return d;
      },
      dataSchema(x) {
        spec.dataSchema = x;
        return d;
      },
      outSchema(x) {
        spec.outSchema = x;
        return d;
      },
      inPropertySchema(x) {
        spec.inPropertySchema = x;
        return d;
      },
      outPropertySchema(x) {
        spec.outPropertySchema = x;
        return d;
      },
      asUserErrors() {
        spec.user = true;
        return d;
      },
      run(fn) {
        if (typeof fn !== 'function') throw notA('doc.run: fn', 'a function', fn);
        return docRun(spec, fn);
      },
    };
    return d;
  }
  return { bytes, crypto, makeDoc };
}
