// Shared helpers of the oapp-format benchmarks: statistics, table printing, deterministic keys
// from a per-run seed (so child processes rebuild the same keys from one hex string), and children.
import { spawnSync } from 'node:child_process';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  concatBytes,
  decodeHex,
  ed25519PublicFromSeed,
  keyFromBytes,
  sha256,
  x25519PublicFromSecret,
  type Key,
} from '@org/envelope-crypto';
import type { DeploymentPolicy, PackageSigner } from '../src/index.js';

export const MiB = 1024 * 1024;
export const BENCH_DIR = dirname(fileURLToPath(import.meta.url));
export const PACKAGE_DIR = dirname(BENCH_DIR);

/** Repetitions per measurement (median reported). Override with BENCH_REPS. */
export const REPS = Math.max(1, Number(process.env.BENCH_REPS ?? '5') || 5);

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

export function fmt(n: number, digits = 1): string {
  return n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** Prints rows as a fixed-width table; the first and `leftCols` columns left-aligned, the rest right-aligned. */
export function printTable(
  head: readonly string[],
  rows: readonly (readonly string[])[],
  leftCols: readonly number[] = [],
): void {
  const all = [head, ...rows];
  const widths = head.map((_, c) => Math.max(...all.map((r) => (r[c] ?? '').length)));
  const line = (r: readonly string[]): string =>
    r
      .map((cell, c) =>
        c === 0 || leftCols.includes(c) ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!),
      )
      .join('  ');
  console.log(line(head));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const r of rows) console.log(line(r));
}

/** A box (`authenticated`) or sign key pair with its id. */
export interface BenchPair {
  readonly id: string;
  readonly secretKey: Key;
  readonly publicKey: Key;
}

/** Every key the benchmarks use: one packager, 10 recipients (deployments), 3 signers. */
export interface BenchKeys {
  readonly packager: BenchPair;
  readonly recipients: readonly BenchPair[];
  readonly signers: readonly BenchPair[];
}

function derive(seed: Uint8Array, label: string): Uint8Array {
  return sha256(concatBytes(seed, new TextEncoder().encode(label)));
}

function boxPair(seed: Uint8Array, id: string): BenchPair {
  const sk = derive(seed, id);
  return {
    id,
    secretKey: keyFromBytes('authenticated', 'secret', sk, id),
    publicKey: keyFromBytes('authenticated', 'public', x25519PublicFromSecret(sk), id),
  };
}

function signPair(seed: Uint8Array, id: string): BenchPair {
  const s = derive(seed, id);
  const pk = ed25519PublicFromSeed(s);
  return {
    id,
    secretKey: keyFromBytes('sign', 'secret', concatBytes(s, pk), id),
    publicKey: keyFromBytes('sign', 'public', pk, id),
  };
}

/** Rebuilds the run's keys from the 32-byte seed in hex (passed to children in BENCH_SEED). */
export function benchKeys(seedHex: string): BenchKeys {
  const seed = decodeHex(seedHex, 32);
  return {
    packager: boxPair(seed, 'packager'),
    recipients: Array.from({ length: 10 }, (_, i) => boxPair(seed, `deployment-${i + 1}`)),
    signers: Array.from({ length: 3 }, (_, i) => signPair(seed, `signer-${i + 1}`)),
  };
}

export const PACKAGE_ID = 'bench-app';

export function signersOf(keys: BenchKeys, n = keys.signers.length): PackageSigner[] {
  return keys.signers.slice(0, n).map((s) => ({ secretKey: s.secretKey, signText: `released by ${s.id}` }));
}

/** The deployment policy of the run: the packager trusted, every signer required. */
export function policyOf(keys: BenchKeys, signerCount = keys.signers.length): DeploymentPolicy {
  return {
    packageId: PACKAGE_ID,
    packagerIdentities: [{ id: keys.packager.id, publicKey: keys.packager.publicKey.bytes }],
    requiredSigners: keys.signers
      .slice(0, signerCount)
      .map((s) => ({ id: s.id, publicKey: s.publicKey.bytes })),
    additionalSigners: [],
    requiredAdditionalSignerCount: 0,
  };
}

/**
 * Runs a child script (plain JavaScript, see compile.ts) in a fresh `node` process and parses the
 * one JSON line it prints last. Keys reach the child as the run's seed in BENCH_SEED (`env`).
 */
export function runChild<T>(script: string, args: readonly string[], env: Record<string, string>): T {
  const r = spawnSync(process.execPath, [script, ...args], {
    cwd: PACKAGE_DIR,
    env: { ...process.env, ...env },
    encoding: 'utf8',
    maxBuffer: 16 * MiB,
  });
  if (r.status !== 0) {
    throw new Error(`${script} ${args.join(' ')} exited with ${r.status ?? r.signal}:\n${r.stderr}`);
  }
  const lines = r.stdout.trim().split('\n');
  return JSON.parse(lines[lines.length - 1]!) as T;
}
