// Issue 27 §1, ADR 0126: a step run's writes, takes included, commit with that run and no other. A producer and a
// consumer step share one store in a real child process, which is killed with SIGKILL at random moments, many
// times; every acknowledged push must afterwards be either acknowledged as consumed or still in the queue.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

const DIST = pathToFileURL(join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'index.js')).href;

/**
 * The child: `produce` pushes the three ids of its body; `consume` takes five, works a while (so a kill often
 * lands between its take and its end), delivers them (`D ids`, written by the host as the script logs it, before
 * the run ends) and returns them. Each finished run is acknowledged on stdout (`P ids`, `C ids`); in drain mode
 * the child takes what is left (`R ids`) and exits. An item taken by a run killed before its delivery must still
 * be in the queue.
 */
const CHILD = `
  import { writeSync } from 'node:fs';
  import { createLmdbPersistence, createWorkflowEngine } from ${JSON.stringify(DIST)};
  const [dataDir, tag, mode] = process.argv.slice(1);
  const say = (line) => writeSync(1, line + '\\n');
  const host = { callOutbound: () => { throw new Error('no'); }, getRestrictedData: async () => undefined,
    registerSecret() {}, metric() {}, now: Date.now,
    log(e) { if (e.source === 'console' && e.message.startsWith('D ')) say(e.message); },
    persistence: createLmdbPersistence({ dataDir }) };
  const step = (stepId, script) => ({ stepId, persistenceFile: 'q.store', resultsProcessor: { script } });
  const engine = await createWorkflowEngine({ workflows: [{ name: 'w', steps: [
    step('produce', "for (const id of context.getBody().split(',')) context.queue('q').push(id);"),
    step('consume', "const items = context.queue('q').take(5); const until = Date.now() + 3;" +
      " while (Date.now() < until) {} if (items.length > 0) console.log('D ' + items.join(','));" +
      " context.setBody(JSON.stringify(items));"),
  ] }] }, { host, data: {} });
  const input = (body) => ({ body, stream: undefined, headers: {}, properties: {} });
  if (mode === 'drain') {
    for (;;) {
      const r = await engine.runStep('consume', input(undefined));
      const items = JSON.parse(r.body);
      if (items.length === 0) break;
      say('R ' + items.join(','));
    }
    engine.dispose(); await host.persistence.close(); process.exit(0);
  }
  let n = 0;
  const produce = async () => {
    for (;;) {
      const ids = [0, 1, 2].map(() => tag + '-' + n++).join(',');
      const r = await engine.runStep('produce', input(ids));
      if (!r.errored) say('P ' + ids);
    }
  };
  const consume = async () => {
    for (;;) {
      const r = await engine.runStep('consume', input(undefined));
      const items = r.errored ? [] : JSON.parse(r.body);
      if (items.length > 0) say('C ' + items.join(','));
    }
  };
  say('ready');
  await Promise.all([produce(), consume(), consume()]);
`;

/** Runs the child until it has acknowledged a first take and then some, kills it with SIGKILL, and returns what it said. */
function runAndKill(dataDir: string, tag: string, afterMs: number): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', CHILD, dataDir, tag], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    let armed = false;
    let fallback: NodeJS.Timeout | undefined;
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      if (!armed && out.includes('\nC ')) {
        armed = true;
        setTimeout(() => child.kill('SIGKILL'), afterMs);
      }
      // A child whose consumers never take (a broken store) is killed all the same; the checks then fail.
      if (!fallback && out.includes('ready\n')) fallback = setTimeout(() => child.kill('SIGKILL'), 5000);
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    child.on('error', reject);
    child.on('close', (_code, signal) => {
      clearTimeout(fallback);
      if (signal !== 'SIGKILL') reject(new Error(`the child ended on its own: ${err}`));
      // A line cut by the kill is not an acknowledgement.
      else resolve(out.split('\n').slice(0, -1));
    });
  });
}

function ids(lines: string[], kind: string): string[] {
  return lines.filter((l) => l.startsWith(`${kind} `)).flatMap((l) => l.slice(2).split(','));
}

describe('S164 queues under kill -9 (ADR 0126)', () => {
  // 12 child processes, each ≈ 0.4 s to its first take plus 60–300 ms of work before the kill: 6–9 s on a quiet machine.
  it(
    'loses no acknowledged item and hands out none twice, with a producer and two consumers killed at random',
    { timeout: 120_000 },
    async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'queue-crash-'));
      try {
        const said: string[] = [];
        for (let round = 0; round < 12; round++)
          said.push(...(await runAndKill(dataDir, `r${round}`, 60 + ((round * 97) % 240))));
        const drain = spawnSync(
          process.execPath,
          ['--input-type=module', '-e', CHILD, dataDir, 'd', 'drain'],
          {
            encoding: 'utf8',
          },
        );
        expect(drain.stderr).toBe('');
        const pushed = new Set(ids(said, 'P'));
        const consumed = ids(said, 'C');
        const delivered = new Set(ids(said, 'D'));
        const left = ids(drain.stdout.split('\n'), 'R');
        expect(consumed.length).toBeGreaterThan(100); // the kills landed while work went on
        // No acknowledged take handed an item out twice, and nothing is both taken and left.
        expect(new Set(consumed).size).toBe(consumed.length);
        const seen = new Set([...consumed, ...left]);
        expect(seen.size).toBe(consumed.length + left.length);
        // Every acknowledged push was delivered by a consumer run or is still in the queue (a run killed after its
        // delivery and before its commit leaves its items in the queue: delivered twice, never lost).
        const lost = [...pushed].filter((id) => !delivered.has(id) && !seen.has(id));
        expect(lost).toEqual([]);
      } finally {
        rmSync(dataDir, { recursive: true, force: true });
      }
    },
  );
});
