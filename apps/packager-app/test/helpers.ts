import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll } from 'vitest';

const HERE = dirname(fileURLToPath(import.meta.url));
export const APP = join(HERE, '..');
export const ROOT = join(APP, '..', '..');
export const BUILD = join(APP, 'scripts', 'build.mjs');
export const CLI_MAIN = join(ROOT, 'apps', 'cli', 'dist', 'main.js');
export const AGENT_MAIN = join(ROOT, 'apps', 'agent-runtime', 'dist', 'main.js');
export const PACKAGER_API_MAIN = join(ROOT, 'apps', 'packager-api', 'dist', 'main.js');

/** What a finished process printed. */
export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `node <script> ...args` to its end. */
export function node(
  script: string,
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], {
      cwd: APP,
      env: { PATH: process.env['PATH'] ?? '', ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The oapp command line of this repository. */
export const oapp = (args: readonly string[], env: Record<string, string> = {}): Promise<Run> =>
  node(CLI_MAIN, args, env);

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A temporary directory, removed after the test file. */
export function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'packager-app-'));
  dirs.push(d);
  return d;
}

/** One build into a new temporary directory (throw-away keys); fails the test when the build fails. */
export async function build(args: readonly string[] = [], env: Record<string, string> = {}): Promise<string> {
  const out = tempDir();
  const r = await node(BUILD, ['--out', out, ...args], env);
  if (r.code !== 0) throw new Error(`build failed (exit ${r.code}): ${r.stderr}`);
  return out;
}

/** A deployment record of the built bootstrap (plain JSON, as the build writes it). */
export type BootstrapRecord = Record<string, unknown> & {
  remoteConfiguration: string;
  allowHttpServerAccess: { id: string; port: number; bindAddress?: string }[];
  allowFileAccess: { id: string; directoryOrFile: string; READ?: boolean; LIST?: boolean }[];
  keys: { id: string; purpose: string; type: string; keyHex: string }[];
  packaging: { packageId: string; packagerIdentities: string[]; requiredSigners: { id: string }[] };
  data: { resourceIds: string[] };
};

export function readBootstrap(out: string): BootstrapRecord[] {
  return JSON.parse(readFileSync(join(out, 'packager.bootstrap.json'), 'utf8')) as BootstrapRecord[];
}

/** Writes a changed copy of the built bootstrap (mode 0600, it holds a secret key) and returns its path. */
export function bootstrapCopy(out: string, change: (r: BootstrapRecord) => void): string {
  const bootstrap = readBootstrap(out);
  change(bootstrap[0]!);
  const path = join(tempDir(), 'bootstrap.json');
  writeFileSync(path, JSON.stringify(bootstrap), { mode: 0o600 });
  return path;
}

/** A port that was free a moment ago (the bootstrap names a fixed port). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** A started process: its output so far and its exit. */
export interface Child {
  proc: ChildProcessWithoutNullStreams;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
}

/**
 * Starts `node <main> ...args`; the agent's admin listener on a free port (39576 may be taken by a parallel run)
 * and its data directory in a temporary directory (its default, `./agent-data`, would be the repository's root).
 */
export function start(main: string, args: readonly string[], env: Record<string, string> = {}): Child {
  const proc = spawn(process.execPath, [main, ...args], {
    cwd: ROOT,
    env: {
      PATH: process.env['PATH'] ?? '',
      AGENT_ADMIN_PORT: '0',
      AGENT_DATA_DIR: join(tempDir(), 'agent-data'),
      ...env,
    },
  });
  let out = '';
  let err = '';
  proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  return { proc, stdout: () => out, stderr: () => err, exited };
}

/** Resolves with the `listening` log line; rejects when the process exits first. */
export function listening(child: Child): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const check = () => {
      const line = child
        .stdout()
        .split('\n')
        .find((l) => l.includes('"msg":"listening"'));
      if (line !== undefined) resolve(JSON.parse(line) as Record<string, unknown>);
    };
    child.proc.stdout.on('data', check);
    check();
    void child.exited.then((code) =>
      reject(new Error(`exited with ${code}: ${child.stderr()}${child.stdout()}`)),
    );
  });
}

/** SIGTERM, then the exit code. */
export async function stop(child: Child | undefined): Promise<number | null | undefined> {
  if (child === undefined) return undefined;
  child.proc.kill('SIGTERM');
  return child.exited;
}
