// pnpm bench: loads the packager (built dist/main.js) and a bare Express endpoint, each in its own process on
// loopback, with autocannon in this process: fixed duration and connections, the same run for all targets.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { encryptString, parseKey, wipe, type Key } from '@org/envelope-crypto';
import { createPackage } from '@org/oapp-format';
import { canonicalize, compileWorkflow } from '@org/workflow-compiler';
import autocannon from 'autocannon';
import { stringEncryptRequest, workflowPackageRequest, type BenchRequest } from './fixtures.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const MAIN = join(HERE, '..', 'dist', 'main.js');
const DURATION_S = Number(process.env['BENCH_DURATION_S'] ?? 10);
const CONNECTIONS = Number(process.env['BENCH_CONNECTIONS'] ?? 16);

interface Figures {
  name: string;
  rps: number;
  p99: number;
  errors: number;
  requests: number;
}

function startChild(
  args: string[],
  env: Record<string, string>,
): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, args, {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let buffered = '';
    let found = false;
    child.stdout.on('data', (d: Buffer) => {
      if (found) return; // keep draining the pipe (request log lines), nothing more
      buffered += d.toString();
      const line = buffered.split('\n').find((l) => l.includes('"listening"'));
      if (line === undefined) return;
      found = true;
      resolve({ child, port: (JSON.parse(line) as { port: number }).port });
    });
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code}`)));
  });
}

async function load(name: string, opts: autocannon.Options): Promise<Figures> {
  const r = await autocannon({ connections: CONNECTIONS, duration: DURATION_S, ...opts });
  return {
    name,
    rps: r.requests.average,
    p99: r.latency.p99,
    errors: r.errors + r.timeouts + r.non2xx,
    requests: r.requests.total,
  };
}

/** Microseconds per call of `fn`, run for `ms` after a warm-up, in this process (one core). */
function microsPerCall(fn: () => void, ms = 2000): number {
  for (let i = 0; i < 200; i++) fn();
  let calls = 0;
  const start = process.hrtime.bigint();
  const end = start + BigInt(ms) * 1_000_000n;
  let now = start;
  while (now < end) {
    for (let i = 0; i < 20; i++) fn();
    calls += 20;
    now = process.hrtime.bigint();
  }
  return Number(now - start) / 1000 / calls;
}

/** Parses every key of a request body as the service does (strict hex, sign-key and weak-key checks). */
function parseKeys(body: BenchRequest['body']): Map<string, Key> {
  return new Map(body.keys.map((k) => [k.id, parseKey(k)]));
}

interface Floor {
  name: string;
  micros: number;
}

/**
 * The crypto each request needs, with the same keys and bytes and nothing else (no HTTP, JSON, multipart or
 * compiling): parsing the request's keys, then encrypting or packaging. Its inverse is the most requests per
 * second one core could serve if everything else were free.
 */
async function cryptoFloor(
  s: BenchRequest,
  w: ReturnType<typeof workflowPackageRequest>,
  resourceDir: string,
): Promise<Floor[]> {
  const plaintext = Buffer.from(s.stream);
  const compiled = await compileWorkflow(Buffer.from(w.stream), { resourceDirs: [resourceDir] });
  const content = Buffer.from(canonicalize(compiled.workflow), 'utf8');
  const stringCrypto = () => {
    const keys = parseKeys(s.body);
    encryptString(plaintext, keys.get('alice')!, keys.get('packager')!);
    keys.forEach((k) => wipe(k.bytes));
  };
  const packageCrypto = () => {
    const keys = parseKeys(w.body);
    createPackage({
      packageId: 'bench',
      content,
      packagerSecretKey: keys.get(w.body.packagerIdentityPrivateKey)!,
      recipients: w.body.encryptionKeys.map((id) => keys.get(id)!),
      signers: w.body.signers.map((x) => ({ secretKey: keys.get(x.key)!, signText: x.signText })),
    });
    keys.forEach((k) => wipe(k.bytes));
  };
  return [
    { name: '/string-encrypt', micros: microsPerCall(stringCrypto) },
    { name: '/workflow-package', micros: microsPerCall(packageCrypto) },
  ];
}

function reportFloor(floors: Floor[], bare: Figures): void {
  console.log('crypto alone per request (same keys and bytes, in this process, no HTTP):');
  for (const f of floors) {
    const ceiling = 1e6 / f.micros;
    console.log(
      `  ${f.name.padEnd(18)} ${f.micros.toFixed(0).padStart(5)} us  -> at most ${ceiling.toFixed(0)} req/s per core` +
        ` = ${((100 * ceiling) / bare.rps).toFixed(1)}% of bare`,
    );
  }
}

function report(rows: Figures[]): void {
  const bare = rows[0]!;
  console.log(
    `\nautocannon: ${CONNECTIONS} connections, ${DURATION_S} s per target, loopback, Node ${process.version}`,
  );
  console.log('target                 req/s     p99 ms   errors   req/s vs bare   p99 vs bare');
  for (const f of rows) {
    console.log(
      `${f.name.padEnd(20)} ${f.rps.toFixed(0).padStart(7)} ${f.p99.toFixed(1).padStart(10)} ${String(f.errors).padStart(8)}` +
        `   ${((100 * f.rps) / bare.rps).toFixed(1).padStart(12)}% ${(f.p99 / bare.p99).toFixed(2).padStart(12)}x`,
    );
  }
  const ratio = (n: string) => rows.find((f) => f.name === n)!.rps / bare.rps;
  const pass =
    ratio('/string-encrypt') >= 0.5 &&
    ratio('/workflow-package') >= 0.25 &&
    rows.every((f) => f.errors === 0);
  console.log(
    `targets (string-encrypt >= 50%, workflow-package >= 25%, zero errors): ${pass ? 'met' : 'NOT met'}`,
  );
}

async function main(): Promise<void> {
  if (!existsSync(MAIN)) throw new Error('build first: pnpm --filter @org/packager-api build');
  const resources = mkdtempSync(join(tmpdir(), 'bench-res-'));
  const app = await startChild([MAIN], {
    PORT: '0',
    PACKAGER_BIND_ADDRESS: '127.0.0.1',
    PACKAGER_RESOURCE_DIRS: resources,
  });
  const bare = await startChild(['--import', 'tsx', join(HERE, 'bare-server.ts')], {});
  try {
    const s = stringEncryptRequest();
    const w = workflowPackageRequest();
    const post = (
      path: string,
      req: { contentType: string; payload: Buffer },
      accept: string,
    ): autocannon.Options => ({
      url: `http://127.0.0.1:${app.port}${path}`,
      method: 'POST',
      headers: { 'content-type': req.contentType, accept },
      body: req.payload,
    });
    // Warm up both servers (JIT) before measuring.
    await autocannon({ url: `http://127.0.0.1:${bare.port}/bare`, connections: 4, duration: 2 });
    await autocannon({ ...post('/string-encrypt', s, 'text/plain'), connections: 4, duration: 2 });
    await autocannon({
      ...post('/workflow-package', w, 'application/octet-stream'),
      connections: 4,
      duration: 2,
    });
    const rows = [
      await load('bare GET /bare', { url: `http://127.0.0.1:${bare.port}/bare` }),
      await load('/string-encrypt', post('/string-encrypt', s, 'text/plain')),
      await load('/workflow-package', post('/workflow-package', w, 'application/octet-stream')),
    ];
    report(rows);
    reportFloor(await cryptoFloor(s, w, resources), rows[0]!);
  } finally {
    app.child.kill('SIGTERM');
    bare.child.kill('SIGTERM');
  }
}

await main();
