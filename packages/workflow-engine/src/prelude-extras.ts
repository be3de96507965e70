/**
 * Sandbox-side `bytes()`, `crypto()` and `doc` (interfaces.md §5.1, §5.7), spliced into the helper source of
 * `prelude-util.ts`, which the context prelude compiles on first use. `env` carries the prelude's host call and
 * run-state accessors.
 */
export const PRELUDE_EXTRAS = String.raw`
  const bytes = {
    create(n) { return new Uint8Array(Number(n) | 0); },
    createFrom(x) { return toBytes(x).slice(); },
    createFromString(s) { return utf8Encode(s); },
    createFromByteArray(a) { return toBytes(a).slice(); },
    copy(b) { return toBytes(b).slice(); },
    concat(a, b) { return concat(a, b); },
    writeBytes(dst, off, src) { dst.set(toBytes(src), Number(off) | 0); return dst; },
    writeByte(b, i, v) { b[Number(i) | 0] = Number(v) & 255; return b; },
    readByte(b, i) { return toBytes(b)[Number(i) | 0]; },
    getSize(b) { return toBytes(b).length; },
    hexToBinary: (h) => fromHex(h), binaryToHex: (b) => toHex(b), base64ToBinary: (s) => fromBase64(s), binaryToBase64: (b) => toBase64(b),
    toString(b) { return utf8Decode(toBytes(b)); },
    sha256(b) { return new Uint8Array(env.call('sha256', [], toBytes(b).slice().buffer)); },
    reader(b) { return b === undefined ? env.streamReader() : memoryReader(b); },
    release() {},
    gzip() { throw unsupported('bytes().gzip'); }, gunzip() { throw unsupported('bytes().gunzip'); },
    zip() { throw unsupported('bytes().zip'); }, unzip() { throw unsupported('bytes().unzip'); },
  };
  const crypto = {
    randomBytes(n) { return new Uint8Array(env.call('randomBytes', [Number(n)])); },
    hash(b) { return bytes.sha256(b); },
  };
  for (const n of ['generateKeyPair', 'registerKey', 'verifySignature', 'encrypt', 'decrypt', 'sign']) crypto[n] = () => { throw unsupported('crypto().' + n); };
  // interfaces.md §5.1: validates the input body, the processor data and the output body; asUserErrors() turns
  // a failure into a 400 answer for the caller instead of a processor error.
  function docCheck(spec, schema, json, what) {
    if (!schema) return;
    let value, err;
    try { value = env.parse(json); } catch (e) { err = what + ' is not JSON'; }
    err = err || validate(schema, value, what, 0);
    if (!err) return;
    if (spec.user) {
      env.S.properties.status_code = '400';
      env.setBodyValue({ error: err });
      env.S.ended = true;
      const stop = new Error('doc: ' + err); stop.docUserError = true; throw stop;
    }
    throw new Error('doc: ' + err);
  }
  function docRun(spec, fn) {
    try {
      docCheck(spec, spec.inSchema, env.getBodyString(), 'body');
      docCheck(spec, spec.dataSchema, env.stringify(env.S.data), 'data');
      const out = fn();
      docCheck(spec, spec.outSchema, env.getBodyString(), 'output');
      return out;
    } catch (e) {
      if (e && e.docUserError) return undefined;
      throw e;
    }
  }
  function makeDoc() {
    const spec = {};
    const d = {
      description(t) { spec.description = String(t); return d; },
      inSchema(x) { spec.inSchema = x; return d; },
      dataSchema(x) { spec.dataSchema = x; return d; },
      outSchema(x) { spec.outSchema = x; return d; },
      asUserErrors() { spec.user = true; return d; },
      run(fn) { return docRun(spec, fn); },
    };
    return d;
  }
`;
