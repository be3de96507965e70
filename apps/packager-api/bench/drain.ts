// SIGTERM under load (issue 27): the built service with keep-alive clients sending back to back (some pipelining
// three requests per write), SIGTERM after a while, and a count of what the clients got. A measurement, never a
// test: the counts of the last two kinds depend on timing and the machine's load.
//
//   pnpm --filter @org/packager-api build && pnpm --filter @org/packager-api exec tsx bench/drain.ts
//   BENCH_MAIN=/other/dist/main.js … (another build, e.g. the one before a change); BENCH_ROUNDS (default 10)
import { mkdtempSync } from 'node:fs';
import { connect } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startChild } from './processes.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const MAIN = process.env['BENCH_MAIN'] ?? join(HERE, '..', 'dist', 'main.js');
const ROUNDS = Math.max(1, Number(process.env['BENCH_ROUNDS'] ?? 10));
const CONNECTIONS = 16;
const SIGTERM_AFTER_MS = 300;

interface Counts {
  /** Requests answered. */
  answered: number;
  /** Answers that said keep-alive although the connection then closed with requests of this client unanswered. */
  keepAliveThenLost: number;
  /** Requests written on a connection that had answered before, never answered (reset or closed under them). */
  lostOnUsedConnection: number;
  /** First requests of a new connection never answered (it reached the accept queue as the listener closed). */
  lostOnNewConnection: number;
}

/** One keep-alive connection: `batch` requests per write, the next write once all are answered. */
function connection(port: number, batch: number, counts: Counts, stopped: () => boolean): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let buf = '';
    let outstanding = 0;
    let answeredHere = 0;
    let lastConnection = '';
    let closing = false;
    const send = () => {
      if (stopped() || closing) return;
      outstanding = batch;
      socket.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(batch));
    };
    socket.setEncoding('latin1');
    socket.on('connect', send);
    socket.on('data', (d: string) => {
      buf += d;
      for (let end = buf.indexOf('\r\n\r\n'); end >= 0; end = buf.indexOf('\r\n\r\n')) {
        const head = buf.slice(0, end).toLowerCase();
        const length = Number(/content-length: *(\d+)/.exec(head)?.[1] ?? 0);
        if (buf.length < end + 4 + length) return;
        buf = buf.slice(end + 4 + length);
        counts.answered++;
        answeredHere++;
        outstanding--;
        lastConnection = /connection: *([a-z-]+)/.exec(head)?.[1] ?? '';
        if (lastConnection === 'close') closing = true;
        if (outstanding === 0) send();
      }
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      if (outstanding > 0) {
        if (answeredHere === 0) counts.lostOnNewConnection += outstanding;
        else counts.lostOnUsedConnection += outstanding;
        if (lastConnection === 'keep-alive') counts.keepAliveThenLost++;
      }
      resolve(answeredHere > 0);
    });
  });
}

async function round(resources: string): Promise<Counts> {
  const { child, port } = await startChild([MAIN], {
    PORT: '0',
    PACKAGER_BIND_ADDRESS: '127.0.0.1',
    PACKAGER_RESOURCE_DIRS: resources,
  });
  const counts: Counts = {
    answered: 0,
    keepAliveThenLost: 0,
    lostOnUsedConnection: 0,
    lostOnNewConnection: 0,
  };
  let exited = false;
  const exit = new Promise<void>((resolve) =>
    child.once('exit', () => {
      exited = true;
      resolve();
    }),
  );
  const client = async (batch: number) => {
    // A new connection after each closed one, as a pooled client does, until one is refused or the child is gone.
    while (!exited && (await connection(port, batch, counts, () => exited))) {
      /* next connection */
    }
  };
  const clients = Array.from({ length: CONNECTIONS }, (_, i) => client(i % 4 === 0 ? 3 : 1));
  await new Promise((r) => setTimeout(r, SIGTERM_AFTER_MS));
  child.kill('SIGTERM');
  await exit;
  await Promise.all(clients);
  return counts;
}

const load = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');

async function main(): Promise<void> {
  const resources = mkdtempSync(join(tmpdir(), 'bench-res-'));
  console.log(
    `${MAIN}: ${ROUNDS} rounds, ${CONNECTIONS} connections (1 in 4 pipelines 3 requests per write)`,
  );
  console.log(`load average before: ${load()}`);
  const total: Counts = {
    answered: 0,
    keepAliveThenLost: 0,
    lostOnUsedConnection: 0,
    lostOnNewConnection: 0,
  };
  for (let i = 0; i < ROUNDS; i++) {
    const c = await round(resources);
    for (const k of Object.keys(total) as (keyof Counts)[]) total[k] += c[k];
  }
  console.log(total);
  console.log(`load average after: ${load()}`);
}

await main();
