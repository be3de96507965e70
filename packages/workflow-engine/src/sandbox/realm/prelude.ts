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
import {
  badArgument,
  codedError,
  integerArg,
  jsonText,
  notA,
  numberArg,
  optionalObject,
  textArg,
} from './args.js';
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

/** What `packager` returns from the host (`packager-ops.ts`): never the answer's headers or bytes. */
interface PackagerView {
  status: number;
  code: string | null;
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
/** The most items one `queue().take(n)` returns (the host's `MAX_TAKE_ITEMS`, persist-ops.ts). */
const MAX_TAKE_ITEMS = 10_000;
/** A timestamp as a string, as apps pass `key.toString()` (the host's rule, persist-ops.ts). */
const TIMESTAMP_TEXT = /^\s*-?[0-9]{1,16}\s*$/;

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
/** `regexMatch`'s pattern: a source text QuickJS refuses is the script's argument error, not a SyntaxError. */
function regExpOf(re: unknown): RegExp {
  const source = textArg(re, 'regexMatch: re');
  try {
    return new RegExp(source);
  } catch (e) {
    if (!(e instanceof SyntaxError)) throw e;
    throw badArgument('regexMatch: re is not a regular expression (' + e.message.slice(0, 80) + ')');
  }
}
/** A `mergeJsonStrings` argument, parsed: text that is not JSON is the script's argument error. */
function jsonOf(v: unknown, what: string): unknown {
  const text = textArg(v, what);
  try {
    return parse(text);
  } catch (e) {
    if (!(e instanceof SyntaxError)) throw e;
    throw badArgument(what + ' is not JSON');
  }
}
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
    if (!utilEnv) throw notPermitted('this processor run has ended');
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
    if (!limits)
      return void call('persist.set', [textArg(k, 'setPersistedItem: k'), str(v, 'setPersistedItem: v')]);
    if (!live) throw notPermitted('this processor run has ended');
    const key = textArg(k, 'setPersistedItem: k'),
      value = typeof v === 'string' ? v : str(v, 'setPersistedItem: v'),
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
    return codedError('ENGINE_PERSISTENCE_LIMIT', what);
  }
  function call(op: string, args?: unknown[], bytes?: ArrayBuffer): unknown {
    if (!live) throw notPermitted('this processor run has ended');
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
  // A value a call stores or sends: strings as they are, objects as JSON, null and undefined as null.
  const str = jsonText;
  function lower(n: unknown, what: string): string {
    return textArg(n, what).toLowerCase();
  }
  function notPermitted(what: string): Error {
    return codedError('ENGINE_NOT_PERMITTED', what);
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
        // -1 asks for everything (`read()`); a script's n is a count.
        const count = n === undefined ? -1 : integerArg(n, 'read: n', 0);
        return new Uint8Array(call('stream.read', [count]) as ArrayBuffer);
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
        const v = own(r.properties, textArg(k, 'getProperty: k'));
        return v === undefined ? null : v;
      },
      getHeader(n: unknown) {
        const v = own(r.headers, lower(n, 'getHeader: n'));
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
  // `{name: value | value[]}`; every value as text.
  function headersArg(h: unknown, what: string): Record<string, string | string[]> {
    const out: Record<string, string | string[]> = {};
    const o = optionalObject(h, what);
    if (o === undefined) return out;
    for (const k of Object.keys(o)) {
      const v = o[k],
        at = what + '.' + k;
      put(out, k, Array.isArray(v) ? v.map((x) => textArg(x, at)) : textArg(v, at));
    }
    return out;
  }
  // `sendToStep(stepId, body[, headers])` as the host call's arguments; an authentication context passes its run
  // properties on (ADR 0054), and the host decides what it may.
  function stepCall(call: string, a: unknown, b: unknown, c: unknown): unknown[] {
    const args = [textArg(a, call + ': stepId'), str(b, call + ': body'), headersArg(c, call + ': headers')];
    return [...args, isAuth ? S.properties : null];
  }
  // sendMetric(key, value[, dims]) or sendMetric(tsMs, key, value[, dims]) (SPEC.md §7).
  function sendMetric(a: unknown, b: unknown, c: unknown, d: unknown): void {
    const stamped = typeof a === 'number' && typeof b === 'string';
    call('metric', [
      stamped ? numberArg(a, 'sendMetric: tsMs') : null,
      stamped ? b : textArg(a, 'sendMetric: key'),
      numberArg(stamped ? c : b, 'sendMetric: value'),
      optionalObject(stamped ? d : c, 'sendMetric: dims') ?? null,
    ]);
  }
  function timestampArg(t: unknown, what: string): unknown {
    if (
      typeof t === 'number'
        ? Number.isSafeInteger(t)
        : typeof t === 'string' && TIMESTAMP_TEXT.test(t) && Number.isSafeInteger(Number(t))
    )
      return t;
    throw notA(what, 'epoch milliseconds (a safe integer, or a string of its digits)', t);
  }
  // Persistence (README "Persistence"): every check and all storage are on the host side (persist-ops.ts).
  const timestampManager = freeze({
    get(k: unknown) {
      return call('ts.get', [textArg(k, 'getTimestampManager().get: k')]);
    },
    set(k: unknown, t: unknown) {
      call('ts.set', [
        textArg(k, 'getTimestampManager().set: k'),
        timestampArg(t, 'getTimestampManager().set: ts'),
      ]);
    },
    setIfLastest(k: unknown, t: unknown) {
      const key = textArg(k, 'getTimestampManager().setIfLastest: k');
      return call('ts.setIfLatest', [key, timestampArg(t, 'getTimestampManager().setIfLastest: ts')]);
    },
    firstTimestamp(k: unknown) {
      return call('ts.first', [textArg(k, 'getTimestampManager().firstTimestamp: k')]);
    },
    minutesAgo(n: unknown) {
      return call('ts.minutesAgo', [numberArg(n, 'getTimestampManager().minutesAgo: n')]);
    },
  });
  function queueOf(q: string) {
    return freeze({
      push(item: unknown) {
        call('queue.push', [q, str(item, 'queue().push: item')]);
      },
      take(n: unknown) {
        return call('queue.take', [q, integerArg(n, 'queue().take: n', 0, MAX_TAKE_ITEMS)]);
      },
      returnItem(item: unknown) {
        call('queue.return', [q, str(item, 'queue().returnItem: item')]);
      },
      size() {
        return call('queue.size', [q]);
      },
    });
  }
  function stepPropSet(k: unknown, v: unknown): void {
    call('stepProps.set', [textArg(k, 'getStepProperties().set: k'), str(v, 'getStepProperties().set: v')]);
  }
  // `put` and `containsKey`: the names scripts written for the reference agent's map use (SPEC.md §4).
  const stepProperties = {
    get(k: unknown) {
      return call('stepProps.get', [textArg(k, 'getStepProperties().get: k')]);
    },
    set: stepPropSet,
    put: stepPropSet,
    containsKey(k: unknown) {
      return call('stepProps.get', [textArg(k, 'getStepProperties().containsKey: k')]) !== null;
    },
    remove(k: unknown) {
      call('stepProps.set', [textArg(k, 'getStepProperties().remove: k'), null]);
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
      const k = textArg(key, 'getData: key');
      const v = hasOwn(S.data, k) ? S.data[k] : undefined;
      return v === undefined ? null : str(v, 'getData');
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
      bytesBody = new U8(U().toBytes(x, 'setStream: x'));
      S.body = null;
      S.bodySet = true;
    },
    end() {
      S.ended = true;
    },
    getHeader(n: unknown) {
      const k = lower(n, 'getHeader: n');
      if (hasOwn(S.outHeaders, k)) return JSON.stringify([S.outHeaders[k]![1]]);
      if (hasOwn(S.inHeaders, k)) return JSON.stringify(S.inHeaders[k]);
      return null;
    },
    setHeader(n: unknown, v: unknown) {
      const name = textArg(n, 'setHeader: name'),
        value = textArg(v, 'setHeader: value');
      put(S.outHeaders, name.toLowerCase(), [name, value]);
      if (isAuth) call('auth.header', [value]);
    },
    removeHeader(n: unknown) {
      const k = lower(n, 'removeHeader: n');
      delete S.outHeaders[k];
      delete S.inHeaders[k];
    },
    removeAllHeaders() {
      S.outHeaders = {};
      S.inHeaders = {};
    },
    setUrl(hostId: unknown, path: unknown) {
      S.url = { hostId: textArg(hostId, 'setUrl: hostId'), path: textArg(path, 'setUrl: path') };
    },
    setHttpMethod(m: unknown) {
      S.method = textArg(m, 'setHttpMethod: m').toUpperCase();
    },
    setProperty(k: unknown, v: unknown) {
      const key = textArg(k, 'setProperty: k');
      put(S.properties, key, v === null || v === undefined ? null : textArg(v, 'setProperty: v'));
    },
    getProperty(k: unknown) {
      const v = own(S.properties, textArg(k, 'getProperty: k'));
      return v === undefined ? null : v;
    },
    getStepProperties() {
      return stepProperties;
    },
    sendToStep(a: unknown, b: unknown, c?: unknown) {
      // A string third argument: sendToStep(accessId, stepId, body) to another deployment (SPEC.md §5.6).
      if (arguments.length === 3 && typeof c === 'string') {
        const args = [textArg(a, 'sendToStep: accessId'), textArg(b, 'sendToStep: stepId'), c];
        return resultObject(call('sendToDeployment', args) as StepResult);
      }
      return resultObject(call('sendToStep', stepCall('sendToStep', a, b, c)) as StepResult);
    },
    sendToStepAndForget(a: unknown, b: unknown, c?: unknown) {
      call('sendToStepAndForget', stepCall('sendToStepAndForget', a, b, c));
    },
    addSystemError(msg: unknown) {
      S.errors.push(textArg(msg, 'addSystemError: msg'));
    },
    addSplitReturnItem(item: unknown) {
      // README "Split and aggregate": an item is a string or a JSON value, never nothing.
      if (item === null || item === undefined)
        throw notA('addSplitReturnItem: item', 'a string or a JSON value', item);
      call('split.add', [str(item, 'addSplitReturnItem: item')]);
    },
    getRestrictedDataFromHost(hostId: unknown) {
      if (!isAuth)
        throw notPermitted('getRestrictedDataFromHost is only available in an authentication context');
      return call('restrictedData', [textArg(hostId, 'getRestrictedDataFromHost: hostId')]);
    },
    callAuthenticationHost(hostId: unknown, path: unknown, options?: unknown) {
      if (!isAuth)
        throw notPermitted('callAuthenticationHost is only available in an authentication context');
      const o = (optionalObject(options, 'callAuthenticationHost: options') ?? {}) as {
        method?: unknown;
        headers?: unknown;
        body?: unknown;
      };
      const r = call('authCall', [
        textArg(hostId, 'callAuthenticationHost: hostId'),
        textArg(path, 'callAuthenticationHost: path'),
        o.method === undefined ? null : textArg(o.method, 'callAuthenticationHost: options.method'),
        headersArg(o.headers, 'callAuthenticationHost: options.headers'),
        str(o.body, 'callAuthenticationHost: options.body'),
      ]) as AuthResponse;
      return {
        getStatus() {
          return r.status;
        },
        getBody() {
          return r.body;
        },
        getHeader(n: unknown) {
          const v = own(r.headers, lower(n, 'getHeader: n'));
          return v === undefined ? null : JSON.stringify(v);
        },
      };
    },
    setAuthenticationPropertiesOnStep(stepId: unknown, ttlMs: unknown, name: unknown, json: unknown) {
      const what = 'setAuthenticationPropertiesOnStep: ';
      call('authProps.set', [
        textArg(stepId, what + 'stepId'),
        numberArg(ttlMs, what + 'ttlMs'),
        textArg(name, what + 'name'),
        str(json, what + 'json'),
      ]);
    },
    getAuthenticationPropertiesFromStep(stepId: unknown, name: unknown) {
      const what = 'getAuthenticationPropertiesFromStep: ';
      return call('authProps.get', [textArg(stepId, what + 'stepId'), textArg(name, what + 'name')]);
    },
    sendMetric,
    counter(k: unknown, d: unknown) {
      return call('counter', [textArg(k, 'counter: key'), numberArg(d, 'counter: delta')]);
    },
    delta(k: unknown, v: unknown) {
      return call('delta', [textArg(k, 'delta: key'), numberArg(v, 'delta: value')]);
    },
    diagnosticLog(msg: unknown) {
      call('log', ['info', 'diagnostic', str(msg, 'diagnosticLog: msg')]);
    },
    getTimestamp() {
      return S.timestampOverride === null ? call('now') : S.timestampOverride;
    },
    sleep(ms: unknown) {
      call('sleep', [numberArg(ms, 'sleep: ms')]);
    },
    hash(s: unknown) {
      return U().crc32(s);
    },
    regexMatch(re: unknown, s: unknown) {
      const m = regExpOf(re).exec(textArg(s, 'regexMatch: s'));
      return m === null ? null : Array.from(m, (x) => (x === undefined ? null : x));
    },
    mergeJsonStrings(a: unknown, b: unknown) {
      return JSON.stringify(
        U().deepMerge(jsonOf(a, 'mergeJsonStrings: a'), jsonOf(b, 'mergeJsonStrings: b')),
      );
    },
    packager() {
      // SPEC.md §7.6: the host runs the request it holds; its answer becomes the step's response.
      const r = call('packager') as PackagerView;
      return freeze({ status: r.status, code: r.code });
    },
    files(id: unknown) {
      return createFiles({ call, toBytes: (x, what) => U().toBytes(x, what) }, textArg(id, 'files: id'));
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
      const key = textArg(k, 'getPersistedItem: k');
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
      return queueOf(name === undefined || name === null ? 'default' : textArg(name, 'queue: name'));
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
