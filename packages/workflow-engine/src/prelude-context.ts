import { PRELUDE_HARDEN } from './prelude-harden.js';

/**
 * Sandbox-side `context`, `console` and `doc` (interfaces.md §5). This is the realm prelude: it runs once when a
 * sandbox realm is created (ADR 0042), captures the one host function and the helper source, hardens the realm
 * (`prelude-harden.ts`) and completes with `[begin, audit]`, which only the worker holds.
 *
 * `begin(input, inBytes)` starts one processor run: it builds a fresh run state, `context`, `console` and `doc`
 * and returns `{ exec(source), finish() }`. `exec` compiles the processor script as the body of a function of
 * `(context, console, doc)` and calls it; `finish` ends the run (later host calls of its `context` fail) and
 * returns the run state as JSON. Calls that need the host go through the captured `__host` function, which the
 * engine checks again (the script can reach nothing else, but it is never trusted).
 */
export const PRELUDE = String.raw`
(function () {
  'use strict';
  const host = globalThis.__host, utilSource = globalThis.__utilSource, indirectEval = globalThis.eval;
  delete globalThis.__host; delete globalThis.__utilSource;
  const stringify = JSON.stringify, parse = JSON.parse, freeze = Object.freeze, Fn = Function, apply = Reflect.apply;
  const hasOwnProperty = Object.prototype.hasOwnProperty, U8 = Uint8Array;
  const hasOwn = (o, k) => apply(hasOwnProperty, o, [k]);
  let utilFactory;
  function begin(input, inBytes) {
    let live = true;
    const S = parse(input);
    let util;
    const U = () => util || (util = (utilFactory || (utilFactory = indirectEval(utilSource)))({ call, S, setBodyValue, getBodyString, streamReader, stringify, parse }));
    let bytesBody = inBytes instanceof ArrayBuffer ? new Uint8Array(inBytes) : null;
    const isAuth = S.auth === true;
    function call(op, args, bytes) {
      if (!live) throw new Error('ENGINE_NOT_PERMITTED: this processor run has ended');
      let r;
      try {
        r = host(op, stringify(args || []), bytes);
      } catch (e) {
        const m = /^([A-Z][A-Z0-9_]+): /.exec(String(e && e.message));
        if (m) e.code = m[1];
        throw e;
      }
      return typeof r === 'string' ? parse(r) : r;
    }
    function str(v) { if (v === null || v === undefined) return null; return typeof v === 'object' ? JSON.stringify(v) : String(v); }
    function lower(n) { return String(n).toLowerCase(); }
    function notPermitted(what) { const e = new Error('ENGINE_NOT_PERMITTED: ' + what); e.code = 'ENGINE_NOT_PERMITTED'; return e; }
    function setBodyValue(x) {
      if (x instanceof Uint8Array || x instanceof ArrayBuffer || ArrayBuffer.isView(x)) { bytesBody = new U8(U().toBytes(x)); S.body = null; return; }
      bytesBody = null;
      S.body = x === null || x === undefined ? null : typeof x === 'object' ? U().serialize(x, 0) : String(x);
    }
    function getBodyString() { return bytesBody ? U().utf8Decode(bytesBody) : S.body; }
    function streamReader() {
      return {
        read(n) { return new Uint8Array(call('stream.read', [n === undefined ? -1 : Number(n)])); },
        readAll() { return new Uint8Array(call('stream.read', [-1])); },
        available() { return call('stream.available'); },
      };
    }
    function resultObject(r) {
      return {
        getBody() { return r.body; },
        getProperty(k) { const v = r.properties[String(k)]; return v === undefined ? null : v; },
        getHeader(n) { const v = r.headers[lower(n)]; return v === undefined ? null : JSON.stringify(v); },
        isErrored() { return r.errored; },
        getAllErrors() { return r.errors.slice(); },
      };
    }
    function headersArg(h) {
      const out = {};
      if (h === null || h === undefined) return out;
      for (const k of Object.keys(h)) out[String(k)] = Array.isArray(h[k]) ? h[k].map(String) : String(h[k]);
      return out;
    }
    function sendMetric(a, b, c, d) {
      if (typeof a === 'number' && typeof b === 'string') call('metric', [a, b, Number(c), d || {}]);
      else call('metric', [null, String(a), Number(b), c || {}]);
    }
    const timestampManager = freeze({ get(k) { return call('ts.get', [String(k)]); }, set(k, t) { call('ts.set', [String(k), t]); }, setIfLastest(k, t) { return call('ts.setIfLatest', [String(k), t]); }, firstTimestamp(k) { return call('ts.first', [String(k)]); }, minutesAgo(n) { return call('ts.minutesAgo', [Number(n)]); } });
    function queueOf(q) { return freeze({ push(item) { call('queue.push', [q, str(item)]); }, take(n) { return call('queue.take', [q, Number(n)]); }, returnItem(item) { call('queue.return', [q, str(item)]); }, size() { return call('queue.size', [q]); } }); }
    const stepProperties = {
      get(k) { return call('stepProps.get', [String(k)]); },
      set(k, v) { call('stepProps.set', [String(k), str(v)]); },
      remove(k) { call('stepProps.set', [String(k), null]); },
      keys() { return call('stepProps.keys'); },
    };
    const context = {
      getBody: getBodyString, getMessageBodyAsString: getBodyString,
      setBody: setBodyValue, setMessage: setBodyValue,
      getPassedMessageAsString() { return S.passed; },
      getData(key) {
        if (arguments.length === 0 || key === undefined) return JSON.stringify(S.data);
        const v = hasOwn(S.data, String(key)) ? S.data[String(key)] : undefined;
        return v === undefined ? null : str(v);
      },
      getStream() { return streamReader(); },
      setStream(x) {
        if (x === null || x === undefined) { bytesBody = null; S.streamCleared = true; return; }
        if (x && typeof x.readAll === 'function') x = x.readAll();
        bytesBody = new U8(U().toBytes(x)); S.body = null;
      },
      end() { S.ended = true; },
      getHeader(n) {
        const k = lower(n);
        if (hasOwn(S.outHeaders, k)) return JSON.stringify([S.outHeaders[k][1]]);
        if (hasOwn(S.inHeaders, k)) return JSON.stringify(S.inHeaders[k]);
        return null;
      },
      setHeader(n, v) {
        S.outHeaders[lower(n)] = [String(n), String(v)];
        if (isAuth) call('auth.header', [String(v)]);
      },
      removeHeader(n) { delete S.outHeaders[lower(n)]; delete S.inHeaders[lower(n)]; },
      removeAllHeaders() { S.outHeaders = {}; S.inHeaders = {}; },
      setUrl(hostId, path) { S.url = { hostId: String(hostId), path: String(path) }; },
      setHttpMethod(m) { S.method = String(m).toUpperCase(); },
      setProperty(k, v) { S.properties[String(k)] = v === null || v === undefined ? null : String(v); },
      getProperty(k) { const v = S.properties[String(k)]; return v === undefined ? null : v; },
      getStepProperties() { return stepProperties; },
      sendToStep(a, b, c) {
        if (arguments.length === 3 && typeof c === 'string') throw U().unsupported('sendToStep(accessId, stepId, body) across deployments');
        return resultObject(call('sendToStep', [String(a), str(b), headersArg(c), isAuth ? S.properties : null]));
      },
      sendToStepAndForget(a, b, c) { call('sendToStepAndForget', [String(a), str(b), headersArg(c), isAuth ? S.properties : null]); },
      addSystemError(msg) { S.errors.push(String(msg)); },
      addSplitReturnItem(item) { call('split.add', [str(item)]); },
      getRestrictedDataFromHost(hostId) {
        if (!isAuth) throw notPermitted('getRestrictedDataFromHost is only available in an authentication context');
        return call('restrictedData', [String(hostId)]);
      },
      callAuthenticationHost(hostId, path, options) {
        if (!isAuth) throw notPermitted('callAuthenticationHost is only available in an authentication context');
        const o = options || {};
        const r = call('authCall', [String(hostId), String(path), o.method === undefined ? null : String(o.method), headersArg(o.headers), str(o.body)]);
        return { getStatus() { return r.status; }, getBody() { return r.body; }, getHeader(n) { const v = r.headers[lower(n)]; return v === undefined ? null : JSON.stringify(v); } };
      },
      setAuthenticationPropertiesOnStep(stepId, ttlMs, name, json) { call('authProps.set', [String(stepId), Number(ttlMs), String(name), str(json)]); },
      getAuthenticationPropertiesFromStep(stepId, name) { return call('authProps.get', [String(stepId), String(name)]); },
      sendMetric, counter(k, d) { return call('counter', [String(k), Number(d)]); }, delta(k, v) { return call('delta', [String(k), Number(v)]); },
      diagnosticLog(msg) { call('log', ['info', 'diagnostic', str(msg)]); },
      getTimestamp() { return S.timestampOverride === null ? call('now') : S.timestampOverride; },
      sleep(ms) { call('sleep', [Number(ms)]); },
      hash(s) { return U().crc32(s); },
      regexMatch(re, s) { const m = new RegExp(String(re)).exec(String(s)); return m === null ? null : Array.from(m, (x) => (x === undefined ? null : x)); },
      mergeJsonStrings(a, b) { return JSON.stringify(U().deepMerge(JSON.parse(a), JSON.parse(b))); },
      bytes() { return U().bytes; },
      crypto() { return U().crypto; },
      setPersistedItem(k, v) { call('persist.set', [String(k), str(v)]); },
      getPersistedItem(k) { return call('persist.get', [String(k)]); },
      getTimestampManager() { call('persist.check'); return timestampManager; },
      queue(name) { call('persist.check'); return queueOf(name === undefined || name === null ? 'default' : String(name)); },
    };
    for (const n of ['files']) {
      context[n] = () => { throw U().unsupported('context.' + n + '()'); };
    }
    function fmt(args) { return Array.prototype.map.call(args, (a) => (typeof a === 'string' ? a : (() => { try { return JSON.stringify(a); } catch (e) { return String(a); } })())).join(' '); }
    const console = {
      log() { call('log', ['info', 'console', fmt(arguments)]); }, info() { call('log', ['info', 'console', fmt(arguments)]); },
      warn() { call('log', ['warn', 'console', fmt(arguments)]); }, error() { call('log', ['error', 'console', fmt(arguments)]); },
      debug() { call('log', ['info', 'console', fmt(arguments)]); },
    };
    const doc = {};
    for (const n of ['description', 'inSchema', 'dataSchema', 'outSchema', 'asUserErrors', 'run']) doc[n] = (...a) => U().makeDoc()[n](...a);
    const api = [freeze(context), freeze(console), freeze(doc)];
    return freeze({
      exec(source) { apply(new Fn('context', 'console', 'doc', source), globalThis, api); },
      finish() {
        live = false;
        S.bodyIsBytes = !!bytesBody;
        return [stringify(S), bytesBody ? new U8(bytesBody).buffer : undefined];
      },
    });
  }
${PRELUDE_HARDEN}
  // The completion value of the prelude: the worker keeps these functions; no script ever sees them.
  return [begin, audit];
})();
`;
