import { derivePublicKey, wipe } from '@org/envelope-crypto';
import {
  displayText,
  inspectPackage,
  isEncryptedBootstrapText,
  MAX_BOOTSTRAP_BYTES,
  MAX_BOOTSTRAP_SIGNATURE_BYTES,
  openEncryptedBootstrap,
  signBootstrap,
  verifyBootstrapSignature,
  type SignerReport,
} from '@org/oapp-format';
import { validateBootstrap } from '@org/workflow-compiler';
import { Command } from 'commander';
import { addAdminOptions, administratorsOf, type Administrators, type AdminOptionValues } from '../admin.js';
import type { Context } from '../context.js';
import { CliError, EXIT_FAILURE, isCodedError } from '../errors.js';
import { outputExists, readInput, STDIO, writeOutput } from '../io.js';
import { checkOutputs } from '../output-paths.js';
import { addReleaseOptions, parseTime, releaseOptionsOf, type ReleaseOptionValues } from '../release.js';
import { addKeyTupleOptions, tupleOf, type KeyTupleOptionValues } from './encrypt.js';
import { addBootstrapSignOptions, KEY_SOURCE_HELP, loadBootstrapSigners } from './shared.js';

// `oapp sign-bootstrap` and `oapp verify-bootstrap`: the detached signature of a plain bootstrap
// (`<bootstrap>.sig`, oapp-format SPEC.md "Signed bootstraps") and the check an agent given administrator keys makes
// at start-up, for a plain bootstrap and its .sig or for an encrypted bootstrap and its signature records.

type Done = (code: number) => void;

/** Where a plain bootstrap's signature is looked for unless `--signature` names it (as the agent looks). */
export const SIGNATURE_SUFFIX = '.sig';

const quoted = displayText;

/** Latin-1 maps every byte to one character: anything but Base64 then fails the strict decoder. */
const latin1 = (bytes: Uint8Array) =>
  Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('latin1');

interface SignOptions extends ReleaseOptionValues {
  output?: string;
  signKey: string[];
  signText?: string[];
  json?: boolean;
}

/** `oapp sign-bootstrap`: the detached signature file an agent with administrator keys checks. */
export function signBootstrapCommand(ctx: Context, done: Done): Command {
  const cmd = new Command('sign-bootstrap')
    .description(
      'sign a plain bootstrap as an administrator: writes <bootstrap>.sig, which an agent given administrator keys requires beside it',
    )
    .argument('<bootstrap>', 'bootstrap JSON file, or - for stdin (then -o is required)')
    .option('-o, --output <file>', 'the signature file (default: <bootstrap>.sig; - for stdout)');
  addBootstrapSignOptions(cmd, true);
  addReleaseOptions(cmd, 'bootstrap', false)
    .option('--json', 'print {ok, output, bytes, sequence, createdAt, expiresAt, signatures}')
    .addHelpText(
      'after',
      `\n${KEY_SOURCE_HELP}\n\nExamples:\n  oapp sign-bootstrap bootstrap.json --sign-key admin.key            # writes bootstrap.json.sig\n` +
        '  oapp sign-bootstrap bootstrap.json --sign-key admin1.key --sign-key admin2.key --sequence 7 --expires-in 90d',
    )
    .action(async (file: string, o: SignOptions) => {
      if (file === STDIO && o.output === undefined)
        throw new CliError(
          'CLI_USAGE',
          'the bootstrap comes from stdin: name the signature file with -o FILE (or -o -)',
        );
      const output = o.output ?? `${file}${SIGNATURE_SUFFIX}`;
      if (o.json === true && output === STDIO)
        throw new CliError(
          'CLI_USAGE',
          '--json prints to stdout: write the signature to a file with -o FILE',
        );
      checkOutputs([{ path: output, flag: '-o' }]);
      const release = releaseOptionsOf(o);
      const signers = await loadBootstrapSigners(ctx, o);
      const bootstrap = await readInput(file, MAX_BOOTSTRAP_BYTES);
      if (isEncryptedBootstrapText(latin1(bootstrap)))
        throw new CliError(
          'CLI_USAGE',
          `${file} is an encrypted bootstrap: its signatures go inside it (oapp encrypt-bootstrap --sign-key); sign-bootstrap signs a plain one`,
        );
      // Nothing is signed unless the bootstrap validates, as nothing is encrypted (encrypt-bootstrap).
      validateBootstrap(bootstrap, { maxBytes: MAX_BOOTSTRAP_BYTES });
      const text = signBootstrap(bootstrap, { signers, ...release });
      // The text ends with its one newline already.
      const bytes = await writeOutput(output, text);
      if (o.json === true) {
        // What the file says, read back through the verifier with the signers' own public keys.
        const keys = signers.map((s, i) => ({
          id: `signer ${i + 1}`,
          publicKey: derivePublicKey(s.secretKey).bytes,
        }));
        const v = verifyBootstrapSignature(bootstrap, text, {
          administrators: { keys, threshold: keys.length },
          now: release.createdAt,
        });
        ctx.printJson({
          ok: true,
          output,
          bytes,
          sequence: v.sequence,
          createdAt: v.createdAt,
          expiresAt: v.expiresAt,
          signatures: signers.length,
        });
      }
      done(0);
    });
  return cmd;
}

interface VerifyBootstrapOptions extends AdminOptionValues, KeyTupleOptionValues {
  signature?: string;
  now?: string;
  json?: boolean;
}

/** What `verify-bootstrap` found. */
interface BootstrapVerdict {
  readonly encrypted: boolean;
  readonly signature?: string | undefined;
  readonly sequence: number | null;
  readonly createdAt: string;
  readonly expiresAt: string | null;
  readonly signers: readonly { readonly id: string; readonly fingerprint: string }[];
}

function unsigned(message: string): CliError {
  return new CliError('CLI_BOOTSTRAP_UNSIGNED', message, EXIT_FAILURE);
}

async function administrators(ctx: Context, o: AdminOptionValues): Promise<Administrators> {
  const admins = await administratorsOf(ctx, o);
  if (admins === undefined)
    throw new CliError(
      'CLI_USAGE',
      'give the administrators: --admin-key FILE (repeatable), or set AGENT_BOOTSTRAP_ADMIN_KEYS or AGENT_BOOTSTRAP_ADMIN_KEYS_FILE as for the agent',
    );
  return admins;
}

async function verifyEncrypted(
  ctx: Context,
  text: string,
  o: VerifyBootstrapOptions,
  admins: Administrators,
  now: Date | undefined,
): Promise<BootstrapVerdict> {
  if (o.signature !== undefined)
    throw new CliError(
      'CLI_USAGE',
      '--signature is for a plain bootstrap: an encrypted one carries its signatures inside',
    );
  const tuple = await tupleOf(ctx, o);
  // The agent's check: the records against the administrators before any stanza is opened, then the whole
  // bootstrap decrypted and its content proven (a forgery made with the deployment's key fails here).
  let opened;
  try {
    opened = await openEncryptedBootstrap(text, tuple, { administrators: admins, now });
  } catch (err) {
    if (isCodedError(err) && err.code === 'POLICY_SIGNER_THRESHOLD_NOT_MET' && (await recordsOf(text)) === 0)
      throw unsigned(
        'the encrypted bootstrap has no signature records (encrypt it with oapp encrypt-bootstrap --sign-key)',
      );
    throw err;
  }
  wipe(opened.content);
  return {
    encrypted: true,
    sequence: opened.release.sequence,
    createdAt: opened.release.createdAt,
    expiresAt: opened.release.expiresAt,
    signers: signersOf(opened.signers),
  };
}

/** How many signature records an encrypted bootstrap carries (read without any key). */
async function recordsOf(text: string): Promise<number> {
  try {
    return (await inspectPackage(Buffer.from(text.trim(), 'base64'))).signatures.length;
  } catch {
    return -1;
  }
}

function signersOf(report: SignerReport): BootstrapVerdict['signers'] {
  return [...report.required, ...report.additional].map(({ id, fingerprint }) => ({ id, fingerprint }));
}

async function verifyPlain(
  ctx: Context,
  file: string,
  bytes: Uint8Array,
  o: VerifyBootstrapOptions,
  admins: Administrators,
  now: Date | undefined,
): Promise<BootstrapVerdict> {
  if (o.keyTuple !== undefined || o.key !== undefined || o.sender !== undefined)
    throw new CliError('CLI_USAGE', '--key-tuple, --key and --sender are for an encrypted bootstrap');
  if (file === STDIO && o.signature === undefined)
    throw new CliError(
      'CLI_USAGE',
      'the bootstrap comes from stdin: name its signature file with --signature FILE',
    );
  const signature = o.signature ?? `${file}${SIGNATURE_SUFFIX}`;
  if (o.signature === undefined && !outputExists(signature))
    throw unsigned(`${file} has no signature: ${signature} does not exist (oapp sign-bootstrap writes it)`);
  // Read up to twice the format's cap, so that oapp-format judges an oversized file (FORMAT_SECTION_TOO_LARGE).
  // The bytes go to oapp-format as they are, as the agent passes them: it counts them against the cap and
  // decodes them as UTF-8 itself (a string would be re-encoded, and a byte above 0x7F counted twice).
  const sigBytes = await readInput(signature, 2 * MAX_BOOTSTRAP_SIGNATURE_BYTES);
  const v = verifyBootstrapSignature(bytes, sigBytes, { administrators: admins, now });
  return {
    encrypted: false,
    signature,
    sequence: v.sequence,
    createdAt: v.createdAt,
    expiresAt: v.expiresAt ?? null,
    signers: signersOf(v.signers),
  };
}

function verdictText(file: string, v: BootstrapVerdict, admins: Administrators): string {
  const names = v.signers.map((s) => `${quoted(s.id)} (${s.fingerprint})`).join(', ');
  return [
    `verified: bootstrap ${quoted(file)}${v.encrypted ? ' (encrypted)' : ''}`,
    ...(v.signature === undefined ? [] : [`  signature    ${quoted(v.signature)}`]),
    `  signed by    ${names} (${admins.threshold} of ${admins.keys.length} administrators required)`,
    `  sequence     ${v.sequence ?? 'none'}`,
    `  created      ${quoted(v.createdAt)}`,
    `  expires      ${v.expiresAt === null ? 'never' : quoted(v.expiresAt)}`,
  ].join('\n');
}

/** `oapp verify-bootstrap`: the agent's start-up check of a bootstrap's administrator signatures. */
export function verifyBootstrapCommand(ctx: Context, done: Done): Command {
  const cmd = new Command('verify-bootstrap')
    .description(
      "check a bootstrap's administrator signatures as an agent given administrator keys does at start-up: a plain bootstrap against its .sig file, an encrypted one against its signature records (decrypted with the agent's key tuple)",
    )
    .argument('<bootstrap>', 'plain bootstrap JSON or encrypted bootstrap text, or - for stdin')
    .option('--signature <file>', 'the signature of a plain bootstrap (default: <bootstrap>.sig)');
  addAdminOptions(cmd);
  addKeyTupleOptions(cmd)
    .option('--now <time>', 'the clock for the expiry check (default: now), YYYY-MM-DDTHH:MM:SSZ')
    .option('--json', 'print {ok, bootstrap, encrypted, signature, sequence, createdAt, expiresAt, signers}')
    .addHelpText(
      'after',
      `\n${KEY_SOURCE_HELP}\n\nExit status 1 (refused): no signature (CLI_BOOTSTRAP_UNSIGNED), a signature that does not verify or too few\n` +
        'administrators (POLICY_*), a changed bootstrap (CRYPTO_CONTENT_MISMATCH), an expired signature (POLICY_EXPIRED).\n\n' +
        'Examples:\n  oapp verify-bootstrap bootstrap.json --admin-key admin.pub\n' +
        '  AGENT_BOOTSTRAP_SECRETKEY=… oapp verify-bootstrap bootstrap.enc --admin-key admins.txt --threshold 2',
    )
    .action(async (file: string, o: VerifyBootstrapOptions) => {
      const now = o.now === undefined ? undefined : parseTime(o.now, '--now');
      const admins = await administrators(ctx, o);
      const bytes = await readInput(file, MAX_BOOTSTRAP_BYTES * 2);
      const text = latin1(bytes);
      const v = isEncryptedBootstrapText(text)
        ? await verifyEncrypted(ctx, text, o, admins, now)
        : await verifyPlain(ctx, file, bytes, o, admins, now);
      if (o.json === true) ctx.printJson({ ok: true, bootstrap: file, ...v });
      else ctx.print(verdictText(file === STDIO ? 'standard input' : file, v, admins));
      done(0);
    });
  return cmd;
}
