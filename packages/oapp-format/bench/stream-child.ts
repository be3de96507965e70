// Child process of stream-rss.ts: one streaming operation on a large file in a fresh `node`
// process (plain JavaScript, see compile.ts), reporting its time and peak resident memory as one
// JSON line. Keys come from BENCH_SEED. Every output goes to `<out>.tmp` and is renamed to `<out>`
// only when the operation succeeded, as a command line tool does.
// Usage: node <build>/bench/stream-child.js write|stream|open|copy <in> <out>
//   write:  writePackage(createReadStream(in)) into a file handle (one pass, prefix written last)
//   stream: createPackageStream(() => createReadStream(in)) piped to a write stream (two passes)
//   open:   openPackageToSink(createReadStream(in)) into a file handle
//   copy:   the bare baseline: createReadStream(in) hashed with SHA-256 and written out
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, statSync } from 'node:fs';
import { open, rename, type FileHandle } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { createPackageStream, openPackageToSink, writePackage } from '../src/index.js';
import { PACKAGE_ID, benchKeys, policyOf, signersOf } from './common.js';
import { procStatusKiB } from './files.js';

const [mode, input, output] = process.argv.slice(2);
if (input === undefined || output === undefined) throw new Error('usage: stream-child.js <mode> <in> <out>');
const tmp = `${output}.tmp`;
const keys = benchKeys(process.env.BENCH_SEED ?? '');
const writerOptions = {
  packageId: PACKAGE_ID,
  packagerSecretKey: keys.packager.secretKey,
  recipients: keys.recipients.map((r) => r.publicKey),
  signers: signersOf(keys),
};
const read = (path: string) => createReadStream(path, { highWaterMark: 64 * 1024 });

let rssPeak = process.memoryUsage.rss();
const sampler = setInterval(() => {
  rssPeak = Math.max(rssPeak, process.memoryUsage.rss());
}, 10);

async function toFile(fn: (fh: FileHandle) => Promise<void>): Promise<void> {
  const fh = await open(tmp, 'w');
  try {
    await fn(fh);
  } finally {
    await fh.close();
  }
}

async function writeAll(fh: FileHandle, b: Uint8Array, pos: number | null) {
  for (let off = 0; off < b.length;) {
    const { bytesWritten } = await fh.write(b, off, b.length - off, pos === null ? null : pos + off);
    off += bytesWritten;
  }
}

const t0 = performance.now();
if (mode === 'write') {
  await toFile(async (fh) => {
    await writePackage(
      { ...writerOptions, content: read(input), contentSize: statSync(input).size },
      { write: (b, pos) => writeAll(fh, b, pos) },
    );
  });
} else if (mode === 'stream') {
  await pipeline(
    createPackageStream({ ...writerOptions, content: () => read(input) }),
    createWriteStream(tmp),
  );
} else if (mode === 'open') {
  await toFile(async (fh) => {
    await openPackageToSink(
      read(input),
      { policy: policyOf(keys), recipientSecretKey: keys.recipients[0]!.secretKey },
      (chunk) => writeAll(fh, chunk, null),
    );
  });
} else if (mode === 'copy') {
  const h = createHash('sha256');
  await toFile(async (fh) => {
    for await (const chunk of read(input) as AsyncIterable<Buffer>) {
      h.update(chunk);
      await writeAll(fh, chunk, null);
    }
  });
  h.digest();
} else throw new Error(`unknown mode ${mode}`);
await rename(tmp, output);
const ms = performance.now() - t0;
clearInterval(sampler);
rssPeak = Math.max(rssPeak, process.memoryUsage.rss());
console.log(
  JSON.stringify({
    mode,
    ms,
    rssPeakMiB: rssPeak / 1048576,
    vmHwmMiB: procStatusKiB('VmHWM') / 1024,
    maxRssMiB: process.resourceUsage().maxRSS / 1024,
  }),
);
