import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';

/** A spawned dist/main.js with its captured output. */
export interface Child {
  proc: ChildProcessWithoutNullStreams;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
}

const running = new Set<Child>();

/**
 * Kills every child still running (SIGKILL): call it in `afterEach`/`afterAll` so a failed or timed-out test
 * never leaves an agent or packager listening.
 */
export async function killAll(except?: Child): Promise<void> {
  const left = [...running].filter((c) => c !== except);
  for (const c of left) c.proc.kill('SIGKILL');
  await Promise.all(left.map((c) => c.exited));
}

/**
 * Spawns `node <main>` with only the given environment (plus PATH, a free admin port and a fresh AGENT_DATA_DIR,
 * each unless given); tracked for {@link killAll}.
 */
export function spawnMain(main: string, env: Record<string, string>, cwd?: string): Child {
  // The agent's admin listener takes a free port (its default, 39576, may be taken by a parallel test), and its data
  // directory (the remembered newest release of each package id, ADR 0144) is a fresh one unless the test gives one.
  const base = {
    PATH: process.env['PATH'] ?? '',
    AGENT_ADMIN_PORT: '0',
    AGENT_DATA_DIR: join(mkdtempSync(join(tmpdir(), 'agent-e2e-')), 'data'),
  };
  const proc = spawn(process.execPath, [main], { env: { ...base, ...env }, cwd });
  let out = '';
  let err = '';
  proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  const child = { proc, stdout: () => out, stderr: () => err, exited };
  running.add(child);
  void exited.then(() => running.delete(child));
  return child;
}

/** Resolves with the first stdout JSON line whose `msg` is `listening`; rejects if the child exits first. */
export function listeningLine(child: Child, ms = 45_000): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`no listening line: ${child.stdout()} ${child.stderr()}`)),
      ms,
    );
    const check = () => {
      for (const line of child.stdout().split('\n')) {
        if (!line.includes('"listening"')) continue;
        clearTimeout(timer);
        resolve(JSON.parse(line) as Record<string, unknown>);
        return;
      }
    };
    child.proc.stdout.on('data', check);
    check();
    void child.exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code}: ${child.stderr()}`));
    });
  });
}

/** A port that was free a moment ago (the agent's bootstrap needs a fixed port). */
export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** The fatal line of a child that must refuse to start (exit 1, nothing listening). */
export async function refusal(child: Child): Promise<{ code: string; msg: string }> {
  expect(await child.exited).toBe(1);
  expect(child.stdout()).not.toContain('"listening"');
  return JSON.parse(child.stderr().trim().split('\n').pop()!) as { code: string; msg: string };
}

/** The child's first JSON log line whose `msg` is `msg`. */
export function logLine(child: Child, msg: string): Record<string, unknown> | undefined {
  return child
    .stdout()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .find((l) => l['msg'] === msg);
}
