// pnpm bench:cluster — one packager process against PACKAGER_WORKERS=2 (node:cluster), both built dist/main.js on
// loopback, loaded by autocannon running in a process of its own (not this one), in interleaved rounds.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringEncryptRequest, workflowPackageRequest } from './fixtures.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const MAIN = join(HERE, '..', 'dist', 'main.js');
const AUTOCANNON = createRequire(import.meta.url).resolve('autocannon/autocannon.js');
const DURATION_S = Number(process.env['BENCH_DURATION_S'] ?? 4);
const ROUNDS = Math.max(1, Number(process.env['BENCH_ROUNDS'] ?? 5));
const CONNECTIONS = Number(process.env['BENCH_CONNECTIONS'] ?? 16);

function loadavg(): string {
  return os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** Starts dist/main.js with `workers` and resolves once every worker logged its `listening` line. */
function startService(workers: number, resources: string): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, [MAIN], {
    env: {
      ...process.env,
      PORT: '0',
      PACKAGER_BIND_ADDRESS: '127.0.0.1',
      PACKAGER_RESOURCE_DIRS: resources,
      PACKAGER_WORKERS: String(workers),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let buffered = '';
    const ports: number[] = [];
    child.stdout.on('data', (d: Buffer) => {
      if (ports.length === workers) return; // keep draining the pipe (request lines), nothing more
      buffered += d.toString();
      const lines = buffered.split('\n');
      buffered = lines.pop()!;
      for (const l of lines)
        if (l.includes('"listening"')) ports.push((JSON.parse(l) as { port: number }).port);
      if (ports.length === workers) resolve({ child, port: ports[0]! });
    });
    child.once('exit', (code) => reject(new Error(`PACKAGER_WORKERS=${workers} exited with ${code}`)));
  });
}

interface Load {
  path: string;
  contentType: string;
  accept: string;
  file: string;
}

/** Runs autocannon in a child process (so the client's CPU is not this process's) and returns its req/s. */
function loadFrom(port: number, l: Load, duration: number): number {
  const r = spawnSync(
    process.execPath,
    [
      AUTOCANNON,
      '-j',
      '-c',
      String(CONNECTIONS),
      '-d',
      String(duration),
      '-m',
      'POST',
      '-H',
      `content-type=${l.contentType}`,
      '-H',
      `accept=${l.accept}`,
      '-i',
      l.file,
      `http://127.0.0.1:${port}${l.path}`,
    ],
    { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
  );
  if (r.status !== 0) throw new Error(`autocannon failed (${r.status}): ${r.stderr}`);
  const out = JSON.parse(r.stdout) as {
    requests: { average: number };
    errors: number;
    timeouts: number;
    non2xx: number;
  };
  const errors = out.errors + out.timeouts + out.non2xx;
  if (errors > 0) throw new Error(`${l.path}: ${errors} failed requests`);
  return out.requests.average;
}

async function main(): Promise<void> {
  if (!existsSync(MAIN)) throw new Error('build first: pnpm --filter @org/packager-api build');
  const dir = mkdtempSync(join(os.tmpdir(), 'bench-cluster-'));
  const resources = join(dir, 'res');
  spawnSync('mkdir', ['-p', resources]);
  const s = stringEncryptRequest();
  const w = workflowPackageRequest();
  writeFileSync(join(dir, 's.body'), s.payload);
  writeFileSync(join(dir, 'w.body'), w.payload);
  const loads: Load[] = [
    { path: '/string-encrypt', contentType: s.contentType, accept: 'text/plain', file: join(dir, 's.body') },
    {
      path: '/workflow-package',
      contentType: w.contentType,
      accept: 'application/octet-stream',
      file: join(dir, 'w.body'),
    },
  ];
  const one = await startService(1, resources);
  const two = await startService(2, resources);
  try {
    console.log(`load average before warm-up: ${loadavg()}`);
    for (const l of loads) for (const svc of [one, two]) loadFrom(svc.port, l, 2);
    const rps = new Map<string, { one: number[]; two: number[] }>(
      loads.map((l) => [l.path, { one: [], two: [] }]),
    );
    const loadPerRound: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      loadPerRound.push(loadavg());
      for (const l of loads) {
        const r = rps.get(l.path)!;
        // ABAB…: which of the two goes first alternates with the round.
        if (round % 2 === 0) {
          r.one.push(loadFrom(one.port, l, DURATION_S));
          r.two.push(loadFrom(two.port, l, DURATION_S));
        } else {
          r.two.push(loadFrom(two.port, l, DURATION_S));
          r.one.push(loadFrom(one.port, l, DURATION_S));
        }
        console.log(
          `round ${round + 1}/${ROUNDS} (load ${loadPerRound.at(-1)}) ${l.path}: 1 process ${r.one.at(-1)!.toFixed(0)}, ` +
            `2 workers ${r.two.at(-1)!.toFixed(0)} req/s`,
        );
      }
    }
    console.log(
      `\nautocannon in its own process: ${CONNECTIONS} connections, ${DURATION_S} s per run, ${ROUNDS} interleaved ` +
        `rounds, loopback, Node ${process.version}, ${os.cpus().length} cores`,
    );
    console.log(
      'target              1 process req/s   2 workers req/s   2 workers / 1 process (median of rounds)',
    );
    for (const l of loads) {
      const r = rps.get(l.path)!;
      const ratio = median(r.two.map((x, i) => x / r.one[i]!));
      console.log(
        `${l.path.padEnd(18)} ${median(r.one).toFixed(0).padStart(17)} ${median(r.two).toFixed(0).padStart(17)} ` +
          `${ratio.toFixed(2).padStart(14)}x`,
      );
    }
    console.log(
      `load average per round (1, 5, 15 min): ${loadPerRound.join(' | ')}; at the end: ${loadavg()}`,
    );
  } finally {
    one.child.kill('SIGTERM');
    two.child.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
