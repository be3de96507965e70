// Section (a): a 64 MiB package for 10 recipients with 3 signers, beside Debian's `age`
// (10 recipients) plus `minisign` (3 signatures / verifications) doing the same work.
import { spawnSync } from 'node:child_process';
import { createReadStream, createWriteStream, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { encodeHex, sha256 } from '@org/envelope-crypto';
import { createPackage, openPackage, openPackageStream } from '../src/index.js';
import {
  MiB,
  PACKAGE_ID,
  REPS,
  fmt,
  median,
  policyOf,
  printTable,
  signersOf,
  type BenchKeys,
} from './common.js';
import { writeRandomFile } from './files.js';

export const FILE_BYTES = 64 * MiB;
const TARGET = 1.5;

export interface VsAgeResult {
  readonly createOurs: number;
  readonly createBase: number;
  readonly openStream: number;
  readonly openBuffered: number;
  readonly openBase: number;
}

/** Null when every tool is on PATH, else the names of the missing ones. */
export function missingTools(): string[] | null {
  const missing = ['age', 'age-keygen', 'minisign'].filter(
    (t) => spawnSync('sh', ['-c', `command -v ${t}`], { stdio: 'ignore' }).status !== 0,
  );
  return missing.length === 0 ? null : missing;
}

function run(cmd: string, args: readonly string[]): string {
  const r = spawnSync(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });
  if (r.status !== 0)
    throw new Error(`${cmd} ${args.join(' ')} failed (${r.status ?? r.signal}): ${r.stderr}`);
  return r.stdout;
}

function timed(fn: () => void): number {
  const t0 = performance.now();
  fn();
  return performance.now() - t0;
}

async function timedAsync(fn: () => Promise<void>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

function sha256File(path: string): string {
  return encodeHex(sha256(readFileSync(path)));
}

export async function benchVsAge(dir: string, keys: BenchKeys): Promise<VsAgeResult> {
  const input = join(dir, 'in.bin');
  writeRandomFile(input, FILE_BYTES);
  const inputHash = sha256File(input);

  // Baseline keys: 10 age identities, 3 unencrypted minisign key pairs (outside the timings).
  const ageRecipients: string[] = [];
  for (let i = 1; i <= 10; i++) {
    run('age-keygen', ['-o', join(dir, `id${i}.txt`)]);
    ageRecipients.push(run('age-keygen', ['-y', join(dir, `id${i}.txt`)]).trim());
  }
  for (let i = 1; i <= 3; i++) {
    run('minisign', ['-G', '-W', '-p', join(dir, `ms${i}.pub`), '-s', join(dir, `ms${i}.key`)]);
  }

  const ageOut = join(dir, 'out.age');
  const ageDec = join(dir, 'dec.age.bin');
  const ours = join(dir, 'out.oapp');
  const oursDec = join(dir, 'dec.oapp.bin');
  const policy = policyOf(keys);
  const recipientSecretKey = keys.recipients[0]!.secretKey;

  // Baseline create: encrypt to 10 recipients, then sign the encrypted file (what is shipped)
  // three times, so the receiver can verify before decrypting, as oapp does.
  const baseCreate = (): void => {
    run('age', [...ageRecipients.flatMap((r) => ['-r', r]), '-o', ageOut, input]);
    for (let i = 1; i <= 3; i++) {
      run('minisign', ['-S', '-s', join(dir, `ms${i}.key`), '-x', `${ageOut}.${i}.minisig`, '-m', ageOut]);
    }
  };
  const baseOpen = (): void => {
    for (let i = 1; i <= 3; i++) {
      run('minisign', [
        '-V',
        '-q',
        '-p',
        join(dir, `ms${i}.pub`),
        '-x',
        `${ageOut}.${i}.minisig`,
        '-m',
        ageOut,
      ]);
    }
    run('age', ['-d', '-i', join(dir, 'id1.txt'), '-o', ageDec, ageOut]);
  };
  const oursCreate = (): void => {
    const content = readFileSync(input);
    const pkg = createPackage({
      packageId: PACKAGE_ID,
      content,
      packagerSecretKey: keys.packager.secretKey,
      recipients: keys.recipients.map((r) => r.publicKey),
      signers: signersOf(keys),
    });
    writeFileSync(ours, pkg);
  };
  const oursOpenStream = async (): Promise<void> => {
    // Read in 1 MiB pieces, as `oapp open` and the agent read packages (64 KiB reads take ~15% longer).
    const opened = await openPackageStream(createReadStream(ours, { highWaterMark: MiB }), {
      policy,
      recipientSecretKey,
    });
    await pipeline(opened.chunks, createWriteStream(oursDec));
  };
  const oursOpenBuffered = async (): Promise<void> => {
    const opened = await openPackage(readFileSync(ours), { policy, recipientSecretKey });
    writeFileSync(oursDec, opened.content);
  };

  const t = { createOurs: [] as number[], createBase: [] as number[], openStream: [] as number[] };
  const t2 = { openBuffered: [] as number[], openBase: [] as number[] };
  for (let rep = 0; rep < REPS; rep++) {
    // Alternate which side goes first, so drift on the shared machine hits both alike.
    if (rep % 2 === 0) {
      t.createOurs.push(timed(oursCreate));
      t.createBase.push(timed(baseCreate));
    } else {
      t.createBase.push(timed(baseCreate));
      t.createOurs.push(timed(oursCreate));
    }
    if (rep % 2 === 0) {
      t.openStream.push(await timedAsync(oursOpenStream));
      t2.openBase.push(timed(baseOpen));
    } else {
      t2.openBase.push(timed(baseOpen));
      t.openStream.push(await timedAsync(oursOpenStream));
    }
    t2.openBuffered.push(await timedAsync(oursOpenBuffered));
    if (rep === 0 && (sha256File(oursDec) !== inputHash || sha256File(ageDec) !== inputHash)) {
      throw new Error('a decrypted output differs from the input');
    }
  }

  const res: VsAgeResult = {
    createOurs: median(t.createOurs),
    createBase: median(t.createBase),
    openStream: median(t.openStream),
    openBuffered: median(t2.openBuffered),
    openBase: median(t2.openBase),
  };
  const row = (op: string, o: number, b: number, target: boolean): string[] => [
    op,
    fmt(o),
    fmt(b),
    fmt(o / b, 2),
    target ? `<= ${TARGET} ${o / b <= TARGET ? 'met' : 'NOT met'}` : '(reference)',
  ];
  printTable(
    ['operation (64 MiB, median of ' + REPS + ')', 'ours ms', 'baseline ms', 'ours/base', 'target'],
    [
      row('create: 10 recipients + 3 signatures', res.createOurs, res.createBase, true),
      row('verify 3 + open, streamed to a file', res.openStream, res.openBase, true),
      row('verify 3 + open, buffered openPackage', res.openBuffered, res.openBase, false),
    ],
    [4],
  );
  console.log(
    'baseline create = age -e (10 x -r) + 3 x minisign -S; baseline open = 3 x minisign -V + age -d; ' +
      'each includes process start-up.',
  );
  const perRep = (o: number[], b: number[]): string => fmt(median(o.map((x, i) => x / b[i]!)), 2);
  console.log(
    `median of the per-repetition ratios (each pair ran back to back): create ${perRep(t.createOurs, t.createBase)}, ` +
      `open streamed ${perRep(t.openStream, t2.openBase)}, open buffered ${perRep(t2.openBuffered, t2.openBase)}`,
  );
  console.log(
    `all samples (ms): create ours ${t.createOurs.map((x) => fmt(x, 0)).join(' ')} | base ${t.createBase.map((x) => fmt(x, 0)).join(' ')}; ` +
      `open ours ${t.openStream.map((x) => fmt(x, 0)).join(' ')} | base ${t2.openBase.map((x) => fmt(x, 0)).join(' ')}`,
  );
  return res;
}
