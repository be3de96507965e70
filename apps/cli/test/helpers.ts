import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateKeyPair, keyToHex, type KeyPurpose } from '@org/envelope-crypto';
import { expect } from 'vitest';

const HERE = dirname(fileURLToPath(import.meta.url));
/** The built command line: every test runs it as a child process, as a user would. */
export const MAIN = join(HERE, '..', 'dist', 'main.js');
export const AGENT_MAIN = join(HERE, '..', '..', 'agent-runtime', 'dist', 'main.js');
export const PACKAGER_MAIN = join(HERE, '..', '..', 'packager-api', 'dist', 'main.js');

/** The outcome of one `oapp` run. */
export interface Run {
  code: number | null;
  stdout: Buffer;
  stderr: string;
  /** stdout as UTF-8 text. */
  out: string;
  /** stdout parsed as JSON (loosely typed: the tests assert the shapes). */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json: () => any;
}

/** Options of {@link oapp}. */
export interface RunOptions {
  cwd?: string;
  /** Extra environment variables (the child gets only these and PATH). */
  env?: Record<string, string>;
  /** Bytes for stdin (stdin is closed either way). */
  input?: string | Uint8Array;
}

/** Runs `node dist/main.js ...args` and waits for it to exit. */
export function oapp(args: readonly string[], options: RunOptions = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [MAIN, ...args], {
      cwd: options.cwd,
      env: { PATH: process.env['PATH'] ?? '', ...options.env },
    });
    const out: Buffer[] = [];
    let err = '';
    proc.stdout.on('data', (d: Buffer) => out.push(d));
    proc.stderr.on('data', (d: Buffer) => (err += d.toString()));
    proc.on('error', reject);
    proc.on('close', (code) => {
      const stdout = Buffer.concat(out);
      const text = stdout.toString('utf8');
      resolve({ code, stdout, stderr: err, out: text, json: () => JSON.parse(text) });
    });
    proc.stdin.end(options.input ?? '');
  });
}

/** The command names of `oapp --help` (its `Commands:` list): the real list, not a copy kept in a test. */
export function commandsOf(help: string): string[] {
  const list = help.slice(help.indexOf('\nCommands:\n'));
  return [...list.matchAll(/^ {2}([a-z][a-z-]*)/gm)].map((m) => m[1]!);
}

/** A fresh temporary directory. */
export function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'oapp-cli-test-'));
}

/** The files of a directory (to prove no temporary output is left behind). */
export function filesIn(dir: string): string[] {
  return readdirSync(dir).sort();
}

/**
 * Writes `NAME.key` (0600) and `NAME.pub` into `dir` as `oapp keygen --purpose PURPOSE -o NAME.key` does (id NAME),
 * in-process: for the tests whose subject is not keygen itself (keys.test.ts runs the real `keygen`).
 */
export function writeKeyPair(dir: string, name: string, purpose: 'authenticated' | 'sign'): void {
  const pair = generateKeyPair(purpose satisfies KeyPurpose);
  const record = (type: 'public' | 'secret', keyHex: string) =>
    `${JSON.stringify({ id: name, purpose, type, keyHex })}\n`;
  writeFileSync(join(dir, `${name}.key`), record('secret', keyToHex(pair.secretKey)), { mode: 0o600 });
  writeFileSync(join(dir, `${name}.pub`), record('public', keyToHex(pair.publicKey!)), { mode: 0o644 });
}

/**
 * Makes packager.key and deployment.key (authenticated) and author.key (sign) in `dir` with the real `oapp keygen`,
 * one after another; each must exit with status 0.
 */
export async function keygenSealKeys(dir: string): Promise<void> {
  for (const [purpose, name] of [
    ['authenticated', 'packager.key'],
    ['authenticated', 'deployment.key'],
    ['sign', 'author.key'],
  ] as const)
    expect((await oapp(['keygen', '--purpose', purpose, '-o', name], { cwd: dir })).code).toBe(0);
}

/** The options of `oapp package` that seal `packageId` with packager.key for deployment.pub, signed by author.key. */
export function sealOptions(packageId: string, signText: string): string[] {
  return [
    '--package-id',
    packageId,
    '--packager-key',
    'packager.key',
    '--recipient',
    'deployment.pub',
    '--signer',
    'author.key',
    '--sign-text',
    signText,
  ];
}

/** The options of `oapp open` for a package sealed with {@link sealOptions}: opened with deployment.key. */
export function openOptions(packageId: string): string[] {
  return [
    '--package-id',
    packageId,
    '--packager',
    'packager.pub',
    '--required-signer',
    'author.pub',
    '--key',
    'deployment.key',
  ];
}

/** The `keyHex` of a key record file. */
export function keyHex(path: string): string {
  return (JSON.parse(readFileSync(path, 'utf8')) as { keyHex: string }).keyHex;
}

/** The workflow of the README's "Run a package" walkthrough. */
export const HELLO_WORKFLOW = {
  workflows: [
    {
      name: 'hello',
      steps: [
        {
          stepId: 'hello',
          trigger: { http: { server: 'api', method: 'POST', path: '/hello' } },
          resultsProcessor: {
            script:
              "const m = JSON.parse(context.getBody()); context.setHeader('Content-Type', 'application/json'); context.setBody({ greeting: 'hello ' + m.name });",
          },
        },
      ],
    },
  ],
};

/** A spawned long-running process (agent, packager) with its captured output. */
export interface Child {
  proc: ChildProcessWithoutNullStreams;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
}

/** Spawns `node main` with only `env` (plus PATH). */
export function spawnMain(main: string, env: Record<string, string>, cwd?: string): Child {
  // The agent's admin listener takes a free port (its default, 39576, may be taken by a parallel test).
  const base = { PATH: process.env['PATH'] ?? '', AGENT_ADMIN_PORT: '0' };
  const proc = spawn(process.execPath, [main], { env: { ...base, ...env }, cwd });
  let out = '';
  let err = '';
  proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  return { proc, stdout: () => out, stderr: () => err, exited };
}

/** Resolves with the first stdout JSON line whose `msg` is `listening`; rejects if the child exits first. */
export function listening(child: Child, ms = 45_000): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no listening line: ${child.stderr()}`)), ms);
    const check = () => {
      const line = child
        .stdout()
        .split('\n')
        .find((l) => l.includes('"listening"'));
      if (line === undefined) return;
      clearTimeout(timer);
      resolve(JSON.parse(line) as Record<string, unknown>);
    };
    child.proc.stdout.on('data', check);
    check();
    void child.exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code}: ${child.stderr()}`));
    });
  });
}

/** A port that was free a moment ago (the agent's bootstrap names a fixed port). */
export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}
