import { encryptString, wipe, type KeyTuple } from '@org/envelope-crypto';
import { decryptBootstrap, encryptBootstrap, MAX_BOOTSTRAP_BYTES } from '@org/oapp-format';
import { parseStrictJson, validateBootstrap } from '@org/workflow-compiler';
import { Command } from 'commander';
import { addAdminOptions, administratorsOf, type AdminOptionValues } from '../admin.js';
import type { Context } from '../context.js';
import { CliError } from '../errors.js';
import { readInput, STDIO, writeOutput } from '../io.js';
import { checkOutputs } from '../output-paths.js';
import { loadKey, loadKeyTuple } from '../keys.js';
import { DEFAULT_BOOTSTRAP_KEY } from '../policy.js';
import { addReleaseOptions, parseTime, releaseOptionsOf, type ReleaseOptionValues } from '../release.js';
import {
  addBootstrapSignOptions,
  addSealOptions,
  KEY_SOURCE_HELP,
  loadBootstrapSigners,
  loadSealKeys,
  type SealFlags,
} from './shared.js';

type Done = (code: number) => void;

/** Largest plaintext read for a `-2/` string (the library refuses above its own 64 KiB limit). */
const STRING_READ_LIMIT = 1024 * 1024;

/**
 * Text output: to a file exactly as the packager returns it; to stdout with a final newline. `--json` prints
 * `{ok, text}` (stdout) or `{ok, output, bytes}` (file).
 */
async function emitText(
  ctx: Context,
  text: string,
  output: string,
  json: boolean | undefined,
): Promise<void> {
  if (output === STDIO) {
    if (json === true) ctx.printJson({ ok: true, text });
    else await writeOutput(STDIO, `${text}\n`);
    return;
  }
  const bytes = await writeOutput(output, text);
  if (json === true) ctx.printJson({ ok: true, output, bytes });
}

interface EncryptOptions extends SealFlags {
  output: string;
  json?: boolean;
}

/** `oapp encrypt-string`: like POST /string-encrypt. */
export function encryptStringCommand(ctx: Context, done: Done): Command {
  const cmd = new Command('encrypt-string')
    .description('encrypt a secret for one agent as a -2/ string (like POST /string-encrypt)')
    .argument(
      '[file]',
      'the plaintext, byte for byte (default: - for stdin; a trailing newline is kept)',
      STDIO,
    )
    .option('-o, --output <file>', 'where the -2/ text goes', STDIO);
  addSealOptions(cmd, false, true)
    .option('--json', 'print {ok, text} (or {ok, output, bytes} with -o FILE)')
    .addHelpText(
      'after',
      `\n${KEY_SOURCE_HELP}\n\nExample:\n  printf %s "$CLIENT_SECRET" | oapp encrypt-string --packager-key packager.key --recipient agent.pub`,
    )
    .action(async (file: string, o: EncryptOptions) => {
      checkOutputs([{ path: o.output, flag: '-o' }]);
      const keys = await loadSealKeys(ctx, o, true);
      const plaintext = await readInput(file, STRING_READ_LIMIT);
      try {
        await emitText(
          ctx,
          encryptString(plaintext, keys.recipients[0]!, keys.packagerSecretKey),
          o.output,
          o.json,
        );
      } finally {
        wipe(plaintext);
      }
      done(0);
    });
  return cmd;
}

interface EncryptBootstrapOptions extends EncryptOptions, ReleaseOptionValues {
  signKey?: string[];
}

/** `oapp encrypt-bootstrap`: like POST /bootstrap-encrypt. */
export function encryptBootstrapCommand(ctx: Context, done: Done): Command {
  const cmd = new Command('encrypt-bootstrap')
    .description(
      'validate a bootstrap, then encrypt it for one or more agents as Base64 text, signed by its administrators (like POST /bootstrap-encrypt)',
    )
    .argument('[file]', 'bootstrap JSON (default: - for stdin)', STDIO)
    .option('-o, --output <file>', 'where the Base64 text goes', STDIO);
  addSealOptions(cmd, false);
  addBootstrapSignOptions(cmd, false);
  addReleaseOptions(cmd, 'bootstrap', true)
    .option('--json', 'print {ok, text} (or {ok, output, bytes} with -o FILE)')
    .addHelpText(
      'after',
      `\n${KEY_SOURCE_HELP}\n\nExamples:\n  oapp encrypt-bootstrap bootstrap.json -o bootstrap.enc --packager-key packager.key --recipient agent.pub\n` +
        '  oapp encrypt-bootstrap bootstrap.json -o bootstrap.enc --packager-key packager.key --recipient agent.pub \\\n' +
        '    --sign-key admin.key --sequence 7',
    )
    .action(async (file: string, o: EncryptBootstrapOptions) => {
      checkOutputs([{ path: o.output, flag: '-o' }]);
      const release = releaseOptionsOf(o);
      if (release.formatVersion === 1 && (o.signKey?.length ?? 0) > 0)
        throw new CliError(
          'CLI_USAGE',
          '--sign-key: a format 1 bootstrap has no signatures; leave out --format-version 1',
        );
      const keys = await loadSealKeys(ctx, o);
      const signers = await loadBootstrapSigners(ctx, o);
      const bootstrap = await readInput(file, MAX_BOOTSTRAP_BYTES);
      try {
        // Nothing is encrypted unless the bootstrap validates (docs/interfaces.md §1.3).
        validateBootstrap(bootstrap, { maxBytes: MAX_BOOTSTRAP_BYTES });
        const text = encryptBootstrap(bootstrap, {
          packagerSecretKey: keys.packagerSecretKey,
          recipients: keys.recipients,
          signers,
          ...release,
        });
        await emitText(ctx, text, o.output, o.json);
      } finally {
        wipe(bootstrap);
      }
      done(0);
    });
  return cmd;
}

/** The parsed values of {@link addKeyTupleOptions}. */
export interface KeyTupleOptionValues {
  key?: string;
  sender?: string;
  keyTuple?: string;
}

/** Adds `--key-tuple`, `--key` and `--sender`: the key an encrypted bootstrap is opened with. */
export function addKeyTupleOptions(cmd: Command): Command {
  return cmd
    .option('--key-tuple <src>', '<sender public hex>/<secret hex> (default env://AGENT_BOOTSTRAP_SECRETKEY)')
    .option('--key <src>', "the agent's authenticated secret key (with --sender)")
    .option('--sender <src>', "the packager's authenticated public key (with --key)");
}

interface DecryptOptions extends KeyTupleOptionValues, AdminOptionValues {
  output: string;
  now?: string;
  json?: boolean;
}

/**
 * The key tuple of {@link addKeyTupleOptions}: `--key-tuple`, or `--key` with `--sender`, or the agent's variable.
 * @throws {@link CliError} usage errors.
 */
export async function tupleOf(ctx: Context, o: KeyTupleOptionValues): Promise<KeyTuple> {
  const warn = (m: string) => ctx.warn(m);
  if (o.keyTuple !== undefined && (o.key !== undefined || o.sender !== undefined))
    throw new CliError('CLI_USAGE', '--key-tuple excludes --key and --sender');
  if (o.key === undefined && o.sender === undefined)
    return loadKeyTuple(o.keyTuple ?? DEFAULT_BOOTSTRAP_KEY, '--key-tuple', ctx.env, warn);
  if (o.key === undefined || o.sender === undefined)
    throw new CliError('CLI_USAGE', '--key and --sender go together (or give --key-tuple)');
  const secret = await loadKey(o.key, { purpose: 'authenticated', type: 'secret' }, '--key', ctx.env, warn);
  const sender = await loadKey(
    o.sender,
    { purpose: 'authenticated', type: 'public' },
    '--sender',
    ctx.env,
    warn,
  );
  return { senderPublicKey: sender.key.bytes, recipientSecretKey: secret.key.bytes };
}

/** `oapp decrypt-bootstrap`: what the agent does with AGENT_BOOTSTRAP + AGENT_BOOTSTRAP_SECRETKEY. */
export function decryptBootstrapCommand(ctx: Context, done: Done): Command {
  const cmd = new Command('decrypt-bootstrap')
    .description(
      'decrypt an encrypted bootstrap, as the agent does with AGENT_BOOTSTRAP_SECRETKEY (with administrator keys: only a bootstrap they signed)',
    )
    .argument('[file]', 'the Base64 text (default: - for stdin)', STDIO)
    .option('-o, --output <file>', 'where the bootstrap JSON goes (mode 0600)', STDIO);
  addKeyTupleOptions(cmd);
  addAdminOptions(cmd)
    .option('--now <time>', 'the clock for the expiry check (default: now), YYYY-MM-DDTHH:MM:SSZ')
    .option('--json', 'print {ok, bootstrap} (or {ok, output, bytes} with -o FILE)')
    .addHelpText(
      'after',
      `\n${KEY_SOURCE_HELP}\n\nExamples:\n  AGENT_BOOTSTRAP_SECRETKEY=… oapp decrypt-bootstrap bootstrap.enc\n` +
        '  oapp decrypt-bootstrap bootstrap.enc --key agent.key --sender packager.pub -o bootstrap.json\n' +
        '  oapp decrypt-bootstrap bootstrap.enc --key agent.key --sender packager.pub --admin-key admin.pub',
    )
    .action(async (file: string, o: DecryptOptions) => {
      checkOutputs([{ path: o.output, flag: '-o' }]);
      const now = o.now === undefined ? undefined : parseTime(o.now, '--now');
      const tuple = await tupleOf(ctx, o);
      const administrators = await administratorsOf(ctx, o);
      // Latin-1 maps every byte to one character: anything but Base64 then fails the strict decoder.
      const text = Buffer.from(await readInput(file, MAX_BOOTSTRAP_BYTES * 2)).toString('latin1');
      const plain = await decryptBootstrap(text, tuple, { administrators, now });
      try {
        if (o.json === true && o.output === STDIO)
          ctx.printJson({ ok: true, bootstrap: parseStrictJson(plain) });
        else {
          const bytes = await writeOutput(o.output, plain, { mode: 0o600 });
          if (o.json === true) ctx.printJson({ ok: true, output: o.output, bytes });
        }
      } finally {
        wipe(plain);
      }
      done(0);
    });
  return cmd;
}
