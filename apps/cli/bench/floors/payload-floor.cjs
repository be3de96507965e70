// The least work the format asks of a writer or an opener, in bare Node, as a bound for `oapp package` and
// `oapp open`: no keys, no signatures, no HEADER, no argument parsing, none of our modules; only what every byte
// costs (SPEC.md §4.6, §6 step 14) plus the output's fsync and rename (ADR 0062).
//   node payload-floor.cjs seal IN OUT KEYFILE sync|nosync   read IN, SHA-256 of it, ChaCha20-Poly1305 per 64 KiB
//                                                           chunk, SHA-256 of the sealed stream, write OUT
//   node payload-floor.cjs open IN OUT KEYFILE sync|nosync   the reverse, each chunk's tag checked
// Written to `OUT.tmp`, then fsync (with `sync`), then rename: what `oapp` does for an output file.
'use strict';
const fs = require('node:fs');
const crypto = require('node:crypto');

const [, , mode, input, output, keyFile, sync] = process.argv;
const CHUNK = 65536;
const TAG = 16;
const BATCH = 1 << 20;
const key = mode === 'seal' ? crypto.randomBytes(32) : fs.readFileSync(keyFile);
if (mode === 'seal') fs.writeFileSync(keyFile, key);
const inFd = fs.openSync(input, 'r');
const tmp = `${output}.tmp`;
const outFd = fs.openSync(tmp, 'w');
const plainHash = crypto.createHash('sha256');
const sealedHash = crypto.createHash('sha256');
const step = mode === 'seal' ? CHUNK : CHUNK + TAG;
const readSize = Math.floor(BATCH / step) * step;
const buf = Buffer.allocUnsafe(readSize);
let index = 0n;
const nonce = Buffer.alloc(12);
for (;;) {
  const n = fs.readSync(inFd, buf, 0, readSize, null);
  if (n === 0) break;
  const parts = [];
  for (let at = 0; at < n; at += step) {
    const piece = buf.subarray(at, Math.min(at + step, n));
    nonce.writeBigUInt64BE(index++, 4);
    if (mode === 'seal') {
      const c = crypto.createCipheriv('chacha20-poly1305', key, nonce, { authTagLength: TAG });
      parts.push(c.update(piece));
      c.final();
      parts.push(c.getAuthTag());
    } else {
      const d = crypto.createDecipheriv('chacha20-poly1305', key, nonce, { authTagLength: TAG });
      d.setAuthTag(piece.subarray(piece.length - TAG));
      parts.push(d.update(piece.subarray(0, piece.length - TAG)));
      d.final();
    }
  }
  const out = Buffer.concat(parts);
  (mode === 'seal' ? plainHash : sealedHash).update(buf.subarray(0, n));
  (mode === 'seal' ? sealedHash : plainHash).update(out);
  fs.writeSync(outFd, out);
}
plainHash.digest();
sealedHash.digest();
if (sync === 'sync') fs.fsyncSync(outFd);
fs.closeSync(outFd);
fs.closeSync(inFd);
fs.renameSync(tmp, output);
