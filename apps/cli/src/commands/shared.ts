import type { Key } from '@org/envelope-crypto';
import type { PackageSigner } from '@org/oapp-format';
import type { Command } from 'commander';
import { collect, type Context } from '../context.js';
import { CliError } from '../errors.js';
import { STDIO } from '../io.js';
import { loadKey, loadKeys } from '../keys.js';
import type { PolicyFlags } from '../policy.js';

/** Help text shared by every key option. */
export const KEY_SOURCE_HELP =
  'Key options take a FILE (a key record {id,purpose,type,keyHex}, the JSON of GET /key-gen, or bare hex) or\n' +
  'env://NAME (an environment variable holding the same). Never put key material on the command line.';

/** The options that make a package or an encrypted text: packager identity, recipients, signers. */
export interface SealFlags {
  readonly packagerKey: string;
  readonly recipient: readonly string[];
  readonly signer?: readonly string[] | undefined;
  readonly signText?: readonly string[] | undefined;
}

/** The keys of {@link SealFlags}, loaded and checked. */
export interface SealKeys {
  readonly packagerSecretKey: Key;
  readonly recipients: Key[];
  readonly signers: PackageSigner[];
}

/** Adds `--packager-key`, `--recipient` (repeatable unless `single`) and, when `signing`, `--signer`/`--sign-text`. */
export function addSealOptions(cmd: Command, signing: boolean, single = false): Command {
  cmd
    .requiredOption(
      '--packager-key <src>',
      'packager identity: authenticated secret key (FILE or env://NAME)',
    )
    .requiredOption(
      '--recipient <src>',
      single
        ? 'the one recipient: authenticated public key (FILE or env://NAME)'
        : 'recipient: authenticated public key (FILE or env://NAME); repeatable',
      collect,
    );
  if (signing) {
    cmd
      .option('--signer <src>', 'signer: sign secret key (FILE or env://NAME); repeatable', collect)
      .option(
        '--sign-text <text>',
        'text covered by the signature, one per --signer (or one for all)',
        collect,
      );
  }
  return cmd;
}

function pairTexts(signers: number, texts: readonly string[], flag = '--signer'): string[] {
  if (signers === 0 && texts.length === 0) return [];
  if (texts.length === signers) return [...texts];
  if (texts.length === 1 && signers > 0) return Array.from({ length: signers }, () => texts[0]!);
  throw new CliError(
    'CLI_USAGE',
    signers === 0
      ? `--sign-text needs ${flag}`
      : `${signers} ${flag} and ${texts.length} --sign-text: give one --sign-text per ${flag}, or one for all`,
  );
}

/** The text a bootstrap signature covers when no `--sign-text` is given. */
export const DEFAULT_BOOTSTRAP_SIGN_TEXT = 'bootstrap';

/** Adds the administrator signing options of a bootstrap: `--sign-key` (repeatable) and `--sign-text`. */
export function addBootstrapSignOptions(cmd: Command, required: boolean): Command {
  const help = 'administrator: sign secret key (FILE or env://NAME); repeatable';
  (required ? cmd.requiredOption.bind(cmd) : cmd.option.bind(cmd))('--sign-key <src>', help, collect);
  return cmd.option(
    '--sign-text <text>',
    `text covered by the signature, one per --sign-key (or one for all; default "${DEFAULT_BOOTSTRAP_SIGN_TEXT}")`,
    collect,
  );
}

/**
 * The signers of `--sign-key` with their texts (`--sign-text`: one per key, one for all, or the default).
 * @throws {@link CliError} usage errors.
 */
export async function loadBootstrapSigners(
  ctx: Context,
  o: { signKey?: readonly string[] | undefined; signText?: readonly string[] | undefined },
): Promise<PackageSigner[]> {
  const srcs = o.signKey ?? [];
  const texts =
    srcs.length > 0 && o.signText === undefined ? [DEFAULT_BOOTSTRAP_SIGN_TEXT] : (o.signText ?? []);
  const paired = pairTexts(srcs.length, texts, '--sign-key');
  const keys = await loadKeys(srcs, { purpose: 'sign', type: 'secret' }, '--sign-key', ctx.env, (m) =>
    ctx.warn(m),
  );
  return keys.map((k, i) => ({ secretKey: k.key, signText: paired[i]! }));
}

/**
 * Loads the keys of {@link SealFlags} (packager secret, recipient public keys, signer secret keys).
 * @throws {@link CliError} usage errors.
 */
export async function loadSealKeys(ctx: Context, f: SealFlags, single = false): Promise<SealKeys> {
  const warn = (m: string) => ctx.warn(m);
  if (single && f.recipient.length !== 1)
    throw new CliError('CLI_USAGE', `exactly one --recipient is required, got ${f.recipient.length}`);
  const texts = pairTexts(f.signer?.length ?? 0, f.signText ?? []);
  const packager = await loadKey(
    f.packagerKey,
    { purpose: 'authenticated', type: 'secret' },
    '--packager-key',
    ctx.env,
    warn,
  );
  const recipients = await loadKeys(
    f.recipient,
    { purpose: 'authenticated', type: 'public' },
    '--recipient',
    ctx.env,
    warn,
  );
  const signers = await loadKeys(
    f.signer ?? [],
    { purpose: 'sign', type: 'secret' },
    '--signer',
    ctx.env,
    warn,
  );
  return {
    packagerSecretKey: packager.key,
    recipients: recipients.map((r) => r.key),
    signers: signers.map((s, i) => ({ secretKey: s.key, signText: texts[i]! })),
  };
}

/** Adds the verification-policy options: a bootstrap record, or the policy given piece by piece. */
export function addPolicyOptions(cmd: Command): Command {
  return cmd
    .option('--bootstrap <file>', 'take the policy from this bootstrap (plain JSON or encrypted text)')
    .option('--deployment <id>', 'the bootstrap record to use (needed when it has more than one)')
    .option(
      '--bootstrap-key <src>',
      'key tuple for an encrypted bootstrap (default env://AGENT_BOOTSTRAP_SECRETKEY)',
    )
    .option('--package-id <id>', 'expected packageId (without --bootstrap)')
    .option('--packager <src>', 'trusted packager: authenticated public key; repeatable', collect)
    .option('--required-signer <src>', 'required signer: sign public key; repeatable', collect)
    .option('--additional-signer <src>', 'additional signer: sign public key; repeatable', collect)
    .option('--threshold <k>', 'how many additional signers must have signed (default 0)');
}

/** The parsed policy options of {@link addPolicyOptions}. */
export interface PolicyOptionValues {
  bootstrap?: string;
  deployment?: string;
  bootstrapKey?: string;
  packageId?: string;
  packager?: string[];
  requiredSigner?: string[];
  additionalSigner?: string[];
  threshold?: string;
}

/** {@link PolicyFlags} from the option values. */
export function policyFlagsOf(o: PolicyOptionValues): PolicyFlags {
  return {
    bootstrap: o.bootstrap,
    deployment: o.deployment,
    bootstrapKey: o.bootstrapKey,
    packageId: o.packageId,
    packager: o.packager ?? [],
    requiredSigner: o.requiredSigner ?? [],
    additionalSigner: o.additionalSigner ?? [],
    threshold: o.threshold,
  };
}

/** `--json` prints a summary on stdout, so binary output cannot go there too. */
export function refuseJsonWithStdout(json: boolean | undefined, output: string): void {
  if (json === true && output === STDIO)
    throw new CliError('CLI_USAGE', '--json prints to stdout: write the output to a file with -o FILE');
}
