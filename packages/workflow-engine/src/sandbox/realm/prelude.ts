/**
 * Sandbox-side `context`, `console` and `doc` (docs/interfaces.md §5). This is the realm prelude, built to the script
 * `dist/sandbox/prelude.global.js` (ADR 0050): it runs once when a sandbox realm is created (ADR 0042), captures
 * the one host function and the helper source, hardens the realm (`harden.ts`) and completes with
 * `[begin, audit]` (the `completion` export), which only the worker holds.
 *
 * `begin(input, inBytes)` starts one processor run: it builds a fresh run state, `context`, `console` and `doc`
 * and returns `{ exec(source), finish() }`. `exec` compiles the processor script as the body of a function of
 * `(context, console, doc)` and calls it; `finish` ends the run (later host calls of its `context` fail) and
 * returns the run state as JSON. Calls that need the host go through the captured `__host` function, which the
 * engine checks again (the script can reach nothing else, but it is never trusted).
 *
 * Runs inside QuickJS: no Node or browser API, no imports at run time (only `harden.ts` is bundled in; the helper
 * factory is compiled from `__utilSource` on first use, so it is imported here for its type only).
 */
import { createFiles } from './files.js';
import { hardenRealm } from './harden.js';
import type { ByteReader, RealmGlobals, RunState, UtilEnv } from './types.js';
import type { Util, UtilFactory } from './util-factory.js';

/** What `sendToStep` returns from the host (`send-ops.ts`). */
interface StepResult {
  body: string | null;
  properties: Record<string, string>;
  headers: Record<string, string[]>;
  errored: boolean;
  errors: string[];
}

/** What `callAuthenticationHost` returns from the host (`auth-ops.ts`). */
interface AuthResponse {
  status: number;
  body: string | null;
  headers: Record<string, string[]>;
}

/**
 * What `finish` returns: the run state as JSON, the bytes body, and the write buffer's last `persist.setMany`
 * arguments (lengths and text, as `takeWrites` makes them) when there is one.
 */
type Finished = [string, ArrayBuffer | undefined, ArrayBuffer | undefined, string | undefined];

/** One processor run as the worker drives it. */
interface Run {
  exec(source: string): void;
  /** `flush`: return the write buffer (false after a timeout: no script-side code runs past the deadline). */
  finish(flush: boolean): Finished;
}

/** Bounds of the write buffer: writes (the host's `MAX_WRITE_BATCH`) and characters of keys and values. */
const WRITE_BATCH_ITEMS = 1000,
  WRITE_BATCH_CHARS = 1024 * 1024;

const G = globalThis as typeof globalThis & RealmGlobals;
const host = G.__host,
  utilSource = G.__utilSource,
  indirectEval = G.eval;
delete G.__host;
delete G.__utilSource;
const stringify = JSON.stringify,
  parse = JSON.parse,
  freeze = Object.freeze,
  Fn = Function,
  apply = Reflect.apply,
  defineProperty = Reflect.defineProperty;
const hasOwnProperty = Object.prototype.hasOwnProperty,
  U8 = Uint8Array;
const hasOwn = (o: object, k: string): boolean => apply(hasOwnProperty, o, [k]);
// Maps parsed from JSON are plain objects: read own properties only, and write with defineProperty so that a
// name such as `toString` is never found on Object.prototype and `__proto__` never replaces a prototype.
const own = <T>(o: Readonly<Record<string, T>>, k: string): T | undefined =>
  hasOwn(o, k) ? o[k] : undefined;
const put = <T>(o: Record<string, T>, k: string, value: T): void => {
  defineProperty(o, k, { value, writable: true, enumerable: true, configurable: true });
};
if (typeof host !== 'function' || typeof utilSource !== 'string')
  throw new Error('the sandbox worker did not install the host function and the helper source');
let utilFactory: UtilFactory | undefined;
function begin(input: string, inBytes: unknown): Run {
  let live = true;
  const S = parse(input) as RunState;
  let util: Util | undefined;
  // The run's functions reach each other through these two bindings (setBodyValue → U → env → setBodyValue):
  // reference cycles QuickJS frees only in a full collection. `finish` clears both, so a finished run's objects
  // are freed at once by reference counting, not left for the next collection (the worker's memory check).
  let utilEnv: UtilEnv | undefined = {
    call,
    S,
    setBodyValue,
    getBodyString,
    streamReader,
    stringify,
    parse,
  };
  const U = (): Util => {
    if (util) return util;
    if (!utilEnv) throw new Error('ENGINE_NOT_PERMITTED: this processor run has ended');
    return (util = (utilFactory || (utilFactory = indirectEval(utilSource!) as UtilFactory))(utilEnv));
  };
  let bytesBody = inBytes instanceof ArrayBuffer ? new Uint8Array(inBytes) : null;
  const isAuth = S.auth === true;
  // The write buffer (README "Persistence", ADR 0052, 0066): setPersistedItem calls of a step whose store this run
  // may write, kept in call order and sent in one `persist.setMany` call before any other host call but log,
  // metric and persist.get, and at the bound; what is left when the run finishes goes back with the run's result.
  // getPersistedItem reads it first (the last write of a key). Arrays, not a Map: a new Map key costs ≈ 1.5 µs in
  // QuickJS, an append almost nothing. The lengths go in an Int32Array (`TL`, two per write: key, then value or
  // -1 for null), whose bytes the host reads directly. The host checks every pair again.
  const limits = S.writeLimits,
    // -1 without limits: the hot path's size checks never pass, so every write takes `setSlow`.
    maxKey = limits ? limits[0] : -1,
    maxValue = limits ? limits[1] : -1;
  let wKeys: string[] = [],
    wValues: (string | null)[] = [],
    wn = 0,
    tl = 0,
    writeChars = 0;
  const TL = new Int32Array(limits ? 2 * WRITE_BATCH_ITEMS : 0);
  // The buffer as `persist.setMany` arguments: the lengths' bytes (little-endian, as wasm is) and the keys, then
  // the values, joined in one text (`join` renders null as ''), so QuickJS never escapes them as JSON. The worker
  // reads the text exactly (worker.ts).
  function takeWrites(): [ArrayBuffer, string] {
    const text = wKeys.join('') + wValues.join('');
    const lengths = TL.buffer.slice(0, tl * 4);
    wKeys = [];
    wValues = [];
    wn = tl = writeChars = 0;
    return [lengths, text];
  }
  function flushWrites(): void {
    if (wn === 0) return;
    const [lengths, text] = takeWrites();
    hostCall('persist.setMany', '[]', lengths, text);
  }
  // setPersistedItem's slow path: no limits (an unbuffered `persist.set`), an ended run, a key or value that is
  // not a string, or one long enough that its UTF-8 size must be counted.
  function setSlow(k: unknown, v: unknown): void {
    if (!limits) return void call('persist.set', [String(k), str(v)]);
    if (!live) throw new Error('ENGINE_NOT_PERMITTED: this processor run has ended');
    const key = typeof k === 'string' ? k : String(k),
      value = typeof v === 'string' ? v : str(v),
      kl = key.length,
      vl = value === null ? -1 : value.length;
    if (kl * 3 > maxKey && tooLarge(key, maxKey)) throw limitError('key is longer than ' + maxKey + ' bytes');
    if (vl * 3 > maxValue && tooLarge(value as string, maxValue))
      throw limitError('value is larger than ' + maxValue + ' bytes');
    wKeys[wn] = key;
    wValues[wn++] = value;
    TL[tl++] = kl;
    TL[tl++] = vl;
    writeChars += vl < 0 ? kl : kl + vl;
    if (wn >= WRITE_BATCH_ITEMS || writeChars >= WRITE_BATCH_CHARS) flushWrites();
  }
  // The size checks of the host's setItem, at the call, so a script can catch a breach where it made it.
  function tooLarge(s: string, max: number): boolean {
    if (s.length * 3 <= max) return false;
    if (s.length > max) return true;
    let n = 0;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c < 0x80) n += 1;
      else if (c < 0x800) n += 2;
      else if (c >= 0xd800 && c < 0xdc00 && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
        n += 4;
        i++;
      } else n += 3; // a lone surrogate is stored as U+FFFD, 3 bytes
    }
    return n > max;
  }
  function limitError(what: string): Error {
    const e = new Error('ENGINE_PERSISTENCE_LIMIT: ' + what) as Error & { code?: string };
    e.code = 'ENGINE_PERSISTENCE_LIMIT';
    return e;
  }
  function call(op: string, args?: unknown[], bytes?: ArrayBuffer): unknown {
    if (!live) throw new Error('ENGINE_NOT_PERMITTED: this processor run has ended');
    if (wn !== 0 && op !== 'log' && op !== 'metric' && op !== 'persist.get') flushWrites();
    return hostCall(op, stringify(args || []), bytes, undefined);
  }
  function hostCall(
    op: string,
    json: string,
    bytes: ArrayBuffer | undefined,
    text: string | undefined,
  ): unknown {
    let r;
    try {
      r = host!(op, json, bytes, text);
    } catch (e) {
      const m = /^([A-Z][A-Z0-9_]+): /.exec(String(e && (e as Error).message));
      if (m) (e as Error & { code?: string }).code = m[1];
      throw e;
    }
    return typeof r === 'string' ? parse(r) : r;
  }
  function str(v: unknown): string | null {
    if (v === null || v === undefined) return null;
    return typeof v === 'object' ? JSON.stringify(v) : String(v);
  }
  function lower(n: unknown): string {
    return String(n).toLowerCase();
  }
  function notPermitted(what: string): Error {
    const e = new Error('ENGINE_NOT_PERMITTED: ' + what) as Error & { code?: string };
    e.code = 'ENGINE_NOT_PERMITTED';
    return e;
  }
  function setBodyValue(x: unknown): void {
    S.bodySet = true;
    if (x instanceof Uint8Array || x instanceof ArrayBuffer || ArrayBuffer.isView(x)) {
      bytesBody = new U8(U().toBytes(x));
      S.body = null;
      return;
    }
    bytesBody = null;
    S.body = x === null || x === undefined ? null : typeof x === 'object' ? U().serialize(x, 0) : String(x);
  }
  function getBodyString(): string | null {
    return bytesBody ? U().utf8Decode(bytesBody) : S.body;
  }
  function streamReader(): ByteReader {
    return {
      read(n) {
        return new Uint8Array(call('stream.read', [n === undefined ? -1 : Number(n)]) as ArrayBuffer);
      },
      readAll() {
        return new Uint8Array(call('stream.read', [-1]) as ArrayBuffer);
      },
      available() {
        return call('stream.available');
      },
    };
  }
  function resultObject(r: StepResult) {
    return {
      getBody() {
        return r.body;
      },
      getProperty(k: unknown) {
        const v = own(r.properties, String(k));
        return v === undefined ? null : v;
      },
      getHeader(n: unknown) {
        const v = own(r.headers, lower(n));
        return v === undefined ? null : JSON.stringify(v);
      },
      isErrored() {
        return r.errored;
      },
      getAllErrors() {
        return r.errors.slice();
      },
    };
  }
  function headersArg(h: unknown): Record<string, string | string[]> {
    const out: Record<string, string | string[]> = {};
    if (h === null || h === undefined) return out;
    const o = h as Record<string, unknown>;
    for (const k of Object.keys(o))
      out[String(k)] = Array.isArray(o[k]) ? (o[k] as unknown[]).map(String) : String(o[k]);
    return out;
  }
  function sendMetric(a: unknown, b: unknown, c: unknown, d: unknown): void {
    if (typeof a === 'number' && typeof b === 'string') call('metric', [a, b, Number(c), d || {}]);
    else call('metric', [null, String(a), Number(b), c || {}]);
  }
  // Persistence (README "Persistence"): every check and all storage are on the host side (persist-ops.ts).
  const timestampManager = freeze({
    get(k: unknown) {
      return call('ts.get', [String(k)]);
    },
    set(k: unknown, t: unknown) {
      call('ts.set', [String(k), t]);
    },
    setIfLastest(k: unknown, t: unknown) {
      return call('ts.setIfLatest', [String(k), t]);
    },
    firstTimestamp(k: unknown) {
      return call('ts.first', [String(k)]);
    },
    minutesAgo(n: unknown) {
      return call('ts.minutesAgo', [Number(n)]);
    },
  });
  function queueOf(q: string) {
    return freeze({
      push(item: unknown) {
        call('queue.push', [q, str(item)]);
      },
      take(n: unknown) {
        return call('queue.take', [q, Number(n)]);
      },
      returnItem(item: unknown) {
        call('queue.return', [q, str(item)]);
      },
      size() {
        return call('queue.size', [q]);
      },
    });
  }
  function stepPropSet(k: unknown, v: unknown): void {
    call('stepProps.set', [String(k), str(v)]);
  }
  // `put` and `containsKey`: the names scripts written for the reference agent's map use (SPEC.md §4).
  const stepProperties = {
    get(k: unknown) {
      return call('stepProps.get', [String(k)]);
    },
    set: stepPropSet,
    put: stepPropSet,
    containsKey(k: unknown) {
      return call('stepProps.get', [String(k)]) !== null;
    },
    remove(k: unknown) {
      call('stepProps.set', [String(k), null]);
    },
    keys() {
      return call('stepProps.keys');
    },
  };
  const context = {
    getBody: getBodyString,
    getMessageBodyAsString: getBodyString,
    setBody: setBodyValue,
    setMessage: setBodyValue,
    getPassedMessageAsString() {
      return S.passed;
    },
    getData(key?: unknown) {
      if (arguments.length === 0 || key === undefined) return JSON.stringify(S.data);
      const v = hasOwn(S.data, String(key)) ? S.data[String(key)] : undefined;
      return v === undefined ? null : str(v);
    },
    getStream() {
      return streamReader();
    },
    setStream(x: unknown) {
      if (x === null || x === undefined) {
        bytesBody = null;
        S.streamCleared = true;
        return;
      }
      if (x && typeof (x as Partial<ByteReader>).readAll === 'function') x = (x as ByteReader).readAll();
      bytesBody = new U8(U().toBytes(x));
      S.body = null;
      S.bodySet = true;
    },
    end() {
      S.ended = true;
    },
    getHeader(n: unknown) {
      const k = lower(n);
      if (hasOwn(S.outHeaders, k)) return JSON.stringify([S.outHeaders[k]![1]]);
      if (hasOwn(S.inHeaders, k)) return JSON.stringify(S.inHeaders[k]);
      return null;
    },
    setHeader(n: unknown, v: unknown) {
      put(S.outHeaders, lower(n), [String(n), String(v)]);
      if (isAuth) call('auth.header', [String(v)]);
    },
    removeHeader(n: unknown) {
      delete S.outHeaders[lower(n)];
      delete S.inHeaders[lower(n)];
    },
    removeAllHeaders() {
      S.outHeaders = {};
      S.inHeaders = {};
    },
    setUrl(hostId: unknown, path: unknown) {
      S.url = { hostId: String(hostId), path: String(path) };
    },
    setHttpMethod(m: unknown) {
      S.method = String(m).toUpperCase();
    },
    setProperty(k: unknown, v: unknown) {
      put(S.properties, String(k), v === null || v === undefined ? null : String(v));
    },
    getProperty(k: unknown) {
      const v = own(S.properties, String(k));
      return v === undefined ? null : v;
    },
    getStepProperties() {
      return stepProperties;
    },
    sendToStep(a: unknown, b: unknown, c?: unknown) {
      // A string third argument: sendToStep(accessId, stepId, body) to another deployment (SPEC.md §5.6).
      if (arguments.length === 3 && typeof c === 'string')
        return resultObject(call('sendToDeployment', [String(a), String(b), c]) as StepResult);
      // An authentication context passes its exchange properties on (ADR 0054); the host decides what it may.
      return resultObject(
        call('sendToStep', [String(a), str(b), headersArg(c), isAuth ? S.properties : null]) as StepResult,
      );
    },
    sendToStepAndForget(a: unknown, b: unknown, c?: unknown) {
      call('sendToStepAndForget', [String(a), str(b), headersArg(c), isAuth ? S.properties : null]);
    },
    addSystemError(msg: unknown) {
      S.errors.push(String(msg));
    },
    addSplitReturnItem(item: unknown) {
      call('split.add', [str(item)]);
    },
    getRestrictedDataFromHost(hostId: unknown) {
      if (!isAuth)
        throw notPermitted('getRestrictedDataFromHost is only available in an authentication context');
      return call('restrictedData', [String(hostId)]);
    },
    callAuthenticationHost(hostId: unknown, path: unknown, options?: unknown) {
      if (!isAuth)
        throw notPermitted('callAuthenticationHost is only available in an authentication context');
      const o = (options || {}) as { method?: unknown; headers?: unknown; body?: unknown };
      const r = call('authCall', [
        String(hostId),
        String(path),
        o.method === undefined ? null : String(o.method),
        headersArg(o.headers),
        str(o.body),
      ]) as AuthResponse;
      return {
        getStatus() {
          return r.status;
        },
        getBody() {
          return r.body;
        },
        getHeader(n: unknown) {
          const v = own(r.headers, lower(n));
          return v === undefined ? null : JSON.stringify(v);
        },
      };
    },
    setAuthenticationPropertiesOnStep(stepId: unknown, ttlMs: unknown, name: unknown, json: unknown) {
      call('authProps.set', [String(stepId), Number(ttlMs), String(name), str(json)]);
    },
    getAuthenticationPropertiesFromStep(stepId: unknown, name: unknown) {
      return call('authProps.get', [String(stepId), String(name)]);
    },
    sendMetric,
    counter(k: unknown, d: unknown) {
      return call('counter', [String(k), Number(d)]);
    },
    delta(k: unknown, v: unknown) {
      return call('delta', [String(k), Number(v)]);
    },
    diagnosticLog(msg: unknown) {
      call('log', ['info', 'diagnostic', str(msg)]);
    },
    getTimestamp() {
      return S.timestampOverride === null ? call('now') : S.timestampOverride;
    },
    sleep(ms: unknown) {
      call('sleep', [Number(ms)]);
    },
    hash(s: unknown) {
      return U().crc32(s);
    },
    regexMatch(re: unknown, s: unknown) {
      const m = new RegExp(String(re)).exec(String(s));
      return m === null ? null : Array.from(m, (x) => (x === undefined ? null : x));
    },
    mergeJsonStrings(a: unknown, b: unknown) {
      return JSON.stringify(U().deepMerge(JSON.parse(a as string), JSON.parse(b as string)));
    },
    files(id: unknown) {
      return createFiles({ call, toBytes: (x) => U().toBytes(x) }, String(id));
    },
    bytes() {
      return U().bytes;
    },
    crypto() {
      return U().crypto;
    },
    setPersistedItem(k: unknown, v: unknown) {
      // The hot path of a write loop (QuickJS interprets it): two strings short enough to pass the size checks
      // without counting, no temporaries, assignments by index. Anything else goes to setSlow.
      if (
        typeof k === 'string' &&
        typeof v === 'string' &&
        k.length * 3 <= maxKey &&
        v.length * 3 <= maxValue &&
        live
      ) {
        wKeys[wn] = k;
        wValues[wn++] = v;
        TL[tl++] = k.length;
        TL[tl++] = v.length;
        if ((writeChars += k.length + v.length) >= WRITE_BATCH_CHARS || wn >= WRITE_BATCH_ITEMS)
          flushWrites();
      } else setSlow(k, v);
    },
    getPersistedItem(k: unknown) {
      const key = String(k);
      const i = wKeys.lastIndexOf(key);
      if (i >= 0) return wValues[i];
      return call('persist.get', [key]);
    },
    getTimestampManager() {
      call('persist.check');
      return timestampManager;
    },
    queue(name?: unknown) {
      call('persist.check');
      return queueOf(name === undefined || name === null ? 'default' : String(name));
    },
  };
  function fmt(args: IArguments): string {
    return (
      Array.prototype.map.call(args as unknown as unknown[], (a) =>
        typeof a === 'string'
          ? a
          : (() => {
              try {
                return JSON.stringify(a);
              } catch {
                return String(a);
              }
            })(),
      ) as string[]
    ).join(' ');
  }
  const console = {
    log() {
      call('log', ['info', 'console', fmt(arguments)]);
    },
    info() {
      call('log', ['info', 'console', fmt(arguments)]);
    },
    warn() {
      call('log', ['warn', 'console', fmt(arguments)]);
    },
    error() {
      call('log', ['error', 'console', fmt(arguments)]);
    },
    debug() {
      call('log', ['info', 'console', fmt(arguments)]);
    },
  };
  const doc: Record<string, (...a: unknown[]) => unknown> = {};
  type DocMethods = Record<string, (...a: unknown[]) => unknown>;
  for (const n of [
    'description',
    'inSchema',
    'dataSchema',
    'outSchema',
    'inPropertySchema',
    'outPropertySchema',
    'asUserErrors',
    'run',
  ])
    doc[n] = (...a: unknown[]) => (U().makeDoc() as unknown as DocMethods)[n]!(...a);
  const api = [freeze(context), freeze(console), freeze(doc)];
  return freeze({
    exec(source: string) {
      apply(new Fn('context', 'console', 'doc', source), globalThis, api);
    },
    finish(flush: boolean): Finished {
      // Buffered writes of a run that threw are kept, as each write was when it was applied at the call; they go
      // back with the result (no host call), and the host applies them before it reads the run's errors.
      const last = flush && wn !== 0 ? takeWrites() : undefined;
      live = false;
      util = utilEnv = undefined;
      S.bodyIsBytes = !!bytesBody;
      return [
        stringify(S),
        bytesBody ? new U8(bytesBody).buffer : undefined,
        last && last[0],
        last && last[1],
      ];
    },
  });
}

const audit = hardenRealm();

/** The completion value of the prelude: the worker keeps these functions; no script ever sees them. */
export const completion = [begin, audit] as const;
