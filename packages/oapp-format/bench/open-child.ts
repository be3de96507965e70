// Child process of section (c): streams a large file in a fresh process and reports its peak
// resident memory and throughput as one JSON line.
// Usage (after compile.ts): node <build>/bench/open-child.js open|hash <file>   (keys from BENCH_SEED)
//   open: openPackageStream(createReadStream(file)), every chunk written to /dev/null.
// Peak RSS = the larger of 10 ms samples and VmHWM (see procStatusKiB for why not maxRSS).
//   hash: the bare streaming read baseline, createReadStream(file) hashed with SHA-256 and
//         written to /dev/null.
import { createHash } from 'node:crypto';
import { closeSync, createReadStream, openSync, statSync, writeSync } from 'node:fs';
import { openPackageStream } from '../src/index.js';
import { benchKeys, policyOf } from './common.js';
import { procStatusKiB } from './files.js';

const [mode, file] = process.argv.slice(2);
if ((mode !== 'open' && mode !== 'hash') || file === undefined)
  throw new Error('usage: open-child.ts open|hash <file>');

const rssStart = process.memoryUsage.rss();
let rssPeak = rssStart;
// What was resident at the peak sample: V8 heap, and ArrayBuffer memory outside it.
let atPeak = { heapTotal: 0, arrayBuffers: 0 };
const sample = (): void => {
  const m = process.memoryUsage();
  if (m.rss > rssPeak) {
    rssPeak = m.rss;
    atPeak = { heapTotal: m.heapTotal, arrayBuffers: m.arrayBuffers };
  }
};
const sampler = setInterval(sample, 10);

const devNull = openSync('/dev/null', 'w');
let bytes = 0;
const t0 = performance.now();
if (mode === 'open') {
  const keys = benchKeys(process.env.BENCH_SEED ?? '');
  const opened = await openPackageStream(createReadStream(file), {
    policy: policyOf(keys),
    recipientSecretKey: keys.recipients[0]!.secretKey,
  });
  for await (const chunk of opened.chunks) {
    writeSync(devNull, chunk);
    bytes += chunk.length;
  }
} else {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(file) as AsyncIterable<Buffer>) {
    h.update(chunk);
    writeSync(devNull, chunk);
    bytes += chunk.length;
  }
  h.digest();
}
const ms = performance.now() - t0;
clearInterval(sampler);
closeSync(devNull);
sample();
console.log(
  JSON.stringify({
    // Linux: the resident set at exit, anonymous memory vs mapped files.
    rssAnonKiB: procStatusKiB('RssAnon'),
    rssFileKiB: procStatusKiB('RssFile'),
    vmHwmKiB: procStatusKiB('VmHWM'),
    mode,
    fileBytes: statSync(file).size,
    bytes,
    ms,
    rssStart,
    rssPeak,
    heapTotalAtPeak: atPeak.heapTotal,
    arrayBuffersAtPeak: atPeak.arrayBuffers,
    maxRssKiB: process.resourceUsage().maxRSS,
  }),
);
