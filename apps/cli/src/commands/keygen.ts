import { generateKeyPair, keyToHex, wipe, type KeyPurpose } from '@org/envelope-crypto';
import { fingerprint } from '@org/oapp-format';
import { basename, extname } from 'node:path';
import { Command, Option } from 'commander';
import type { Context } from '../context.js';
import { CliError } from '../errors.js';
import { STDIO, writeFiles, writeOutput } from '../io.js';
import { checkOutputs } from '../output-paths.js';

/** The purposes of `GET /key-gen`, and its aliases (docs/interfaces.md §1.5). */
export const KEYGEN_PURPOSES = ['sign', 'authenticated', 'anonymous', 'symmetric'] as const;
const ALIASES: ReadonlyMap<string, KeyPurpose> = new Map([
  ['box', 'authenticated'],
  ['secretbox', 'symmetric'],
]);

interface KeygenOptions {
  purpose: string;
  output: string;
  publicOutput?: string;
  id?: string;
  force?: boolean;
  json?: boolean;
}

/** `author.key` → `author.pub`; any other name gets `.pub` appended. */
export function publicPathFor(secretPath: string): string {
  return secretPath.endsWith('.key') ? `${secretPath.slice(0, -4)}.pub` : `${secretPath}.pub`;
}

function record(id: string, purpose: KeyPurpose, type: 'public' | 'secret', keyHex: string): string {
  return `${JSON.stringify({ id, purpose, type, keyHex })}\n`;
}

async function keygen(ctx: Context, o: KeygenOptions): Promise<number> {
  const purpose = (KEYGEN_PURPOSES as readonly string[]).includes(o.purpose)
    ? (o.purpose as KeyPurpose)
    : ALIASES.get(o.purpose)!;
  if (o.output === STDIO) {
    if (o.publicOutput !== undefined) throw new CliError('CLI_USAGE', '--public-out needs -o FILE');
    // The response of GET /key-gen, byte for byte in shape.
    const pair = generateKeyPair(purpose);
    const text = JSON.stringify({
      ok: true,
      purpose,
      encoding: 'hex',
      keyPair: {
        publicKeyHex: pair.publicKey === null ? null : keyToHex(pair.publicKey),
        secretKeyHex: keyToHex(pair.secretKey),
      },
    });
    wipe(pair.secretKey.bytes);
    await writeOutput(STDIO, `${text}\n`);
    return 0;
  }
  if (purpose === 'symmetric' && o.publicOutput !== undefined)
    throw new CliError('CLI_USAGE', 'a symmetric key has no public half: drop --public-out');
  const pubPath = purpose === 'symmetric' ? undefined : (o.publicOutput ?? publicPathFor(o.output));
  const noClobber = o.force !== true;
  // S152 and issue 27: both paths are checked before anything is generated or written, so a bad --public-out
  // leaves no secret key file behind (which would refuse the retry).
  checkOutputs([
    { path: o.output, flag: '-o', noClobber },
    ...(pubPath === undefined ? [] : [{ path: pubPath, flag: '--public-out', noClobber }]),
  ]);
  const id = o.id ?? basename(o.output, extname(o.output));
  const pair = generateKeyPair(purpose);
  const pub = pair.publicKey;
  const secretRecord = Buffer.from(record(id, purpose, 'secret', keyToHex(pair.secretKey)), 'utf8');
  try {
    // Written as a set: both staged first, then moved into place; a failure leaves neither.
    await writeFiles([
      { path: o.output, data: secretRecord, options: { mode: 0o600, noClobber } },
      ...(pubPath === undefined || pub === null
        ? []
        : [
            {
              path: pubPath,
              data: record(id, purpose, 'public', keyToHex(pub)),
              options: { mode: 0o644, noClobber },
            },
          ]),
    ]);
  } finally {
    wipe(pair.secretKey.bytes);
    secretRecord.fill(0);
  }
  const fp = pub === null ? null : fingerprint(pub.bytes);
  if (o.json === true) {
    ctx.printJson({
      ok: true,
      id,
      purpose,
      secretKeyFile: o.output,
      publicKeyFile: pubPath ?? null,
      publicKeyHex: pub === null ? null : keyToHex(pub),
      fingerprint: fp,
    });
  } else {
    ctx.print(`${o.output}: ${purpose} secret key "${id}" (mode 0600)`);
    if (pubPath !== undefined) ctx.print(`${pubPath}: ${purpose} public key "${id}", fingerprint ${fp}`);
  }
  return 0;
}

/** `oapp keygen`. */
export function keygenCommand(ctx: Context, done: (code: number) => void): Command {
  return new Command('keygen')
    .description('generate a key pair into key files (secret 0600, public beside it), like GET /key-gen')
    .addOption(
      new Option(
        '--purpose <purpose>',
        'sign, authenticated, anonymous or symmetric (box, secretbox: aliases)',
      )
        .choices([...KEYGEN_PURPOSES, ...ALIASES.keys()])
        .makeOptionMandatory(),
    )
    .requiredOption('-o, --output <file>', 'secret key file (mode 0600); - prints the key-gen JSON to stdout')
    .option('--public-out <file>', 'public key file (default: FILE with .key replaced by .pub, or FILE.pub)')
    .option('--id <id>', 'key id written into the records (default: the file name without extension)')
    .option('--force', 'replace existing key files')
    .option('--json', 'print a JSON summary')
    .addHelpText(
      'after',
      '\nExample:\n  oapp keygen --purpose sign -o author.key     # writes author.key (0600) and author.pub',
    )
    .action(async (o: KeygenOptions & { publicOut?: string }) => {
      done(await keygen(ctx, { ...o, publicOutput: o.publicOut }));
    });
}
