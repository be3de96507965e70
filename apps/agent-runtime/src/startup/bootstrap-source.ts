import { existsSync, readFileSync, statSync } from 'node:fs';
import { decodeBase64, type KeyTuple } from '@org/envelope-crypto';
import {
  MAGIC,
  MAX_BOOTSTRAP_BYTES,
  MAX_BOOTSTRAP_SIGNATURE_BYTES,
  inspectPackage,
  isEncryptedBootstrapText,
  openEncryptedBootstrap,
  verifyBootstrapSignature,
  type BootstrapAdministrators,
} from '@org/oapp-format';
import { validateBootstrapWithVariables, type Bootstrap } from '@org/workflow-compiler';
import { AgentError, isCodedError, type Fields } from '@org/workflow-runtime';
import { withContext } from '@org/workflow-runtime/internal';
import {
  checkBootstrapRelease,
  type BootstrapRollback,
  type BootstrapRollbackOptions,
} from './bootstrap-release.js';
import type { Config } from './config.js';
import { refuseTrustBearingReferences } from './bootstrap-references.js';
import { FORBIDDEN_VARIABLES, type BootstrapVariables } from './variables.js';

/** How the bootstrap was given (logged at start; never the content). */
export type BootstrapForm = 'file' | 'base64' | 'json' | 'encrypted' | 'encrypted-file';

/**
 * Whether the bootstrap's signature was checked (issue 29 §2): `verified` (administrator keys were given and K of
 * them signed), `unsigned` (no signature file, no signature record), or `signed, not checked` (a signature exists
 * but no administrator keys were given, so nothing was checked).
 */
export type BootstrapSignatureState = 'verified' | 'unsigned' | 'signed, not checked';

/** What the start-up report says about the bootstrap's signature (never a key, never content). */
export interface BootstrapTrust {
  readonly signature: BootstrapSignatureState;
  /** Where a plain bootstrap's signature was looked for (absent for an encrypted one or text without one). */
  readonly signatureFile?: string | undefined;
  /** For a verified signature: its release fields and the administrators who signed. */
  readonly sequence?: number | undefined;
  readonly createdAt?: string | undefined;
  readonly expiresAt?: string | null | undefined;
  readonly signers?: readonly string[] | undefined;
  /**
   * For a verified signature: the verdict on its sequence against `AGENT_BOOTSTRAP_MINIMUM_SEQUENCE` and the newest
   * bootstrap accepted before (ADR 0147), and what start-up remembers once it succeeded.
   */
  readonly rollback?: BootstrapRollback | undefined;
  /**
   * The names of the variables the bootstrap references (never their values), each once: with a verified signature
   * they are the parts the signature does not cover (only allowed outside trust-bearing positions, ADR 0147).
   */
  readonly variables?: readonly string[] | undefined;
}

/** How the bootstrap's signature is checked: `AGENT_BOOTSTRAP_ADMIN_KEYS*` and `AGENT_BOOTSTRAP_SIGNATURE`. */
export interface BootstrapTrustOptions {
  /** With administrators, an unsigned or wrongly signed bootstrap stops start-up before it is read. */
  readonly administrators?: BootstrapAdministrators | undefined;
  /** The plain bootstrap's signature file (default: `<bootstrap file>.sig`; none for text). */
  readonly signaturePath?: string | undefined;
  /** The clock for `expiresAt` (tests); default now. */
  readonly now?: Date | undefined;
  /**
   * With administrators: the floor, the deliberate downgrade and the data directory a verified bootstrap's sequence
   * is checked against (ADR 0147). Absent: no floor, nothing remembered.
   */
  readonly rollback?: BootstrapRollbackOptions | undefined;
}

/** The trust options of the agent's configuration: administrators, signature file, rollback (ADR 0143, 0147). */
export function trustOptionsOf(
  config: Pick<
    Config,
    | 'bootstrapAdministrators'
    | 'bootstrapSignature'
    | 'bootstrapMinimumSequence'
    | 'bootstrapAllowDowngradeTo'
    | 'dataDir'
  >,
): BootstrapTrustOptions {
  return {
    administrators: config.bootstrapAdministrators,
    signaturePath: config.bootstrapSignature,
    rollback: {
      dataDir: config.dataDir,
      minimumSequence: config.bootstrapMinimumSequence,
      allowDowngradeTo: config.bootstrapAllowDowngradeTo,
    },
  };
}

/** A validated, normalised bootstrap and the form it came in. */
export interface LoadedBootstrap {
  readonly bootstrap: Bootstrap;
  readonly form: BootstrapForm;
  /** The signature state, for the start-up report. */
  readonly trust: BootstrapTrust;
  /** Values substituted from the secrets file: register them with the redactor (ADR 0059). Never log them. */
  readonly secrets: readonly string[];
}

const NO_VARIABLES: BootstrapVariables = { values: new Map(), secretNames: new Set() };

const utf8 = new TextDecoder('utf-8', { fatal: true });

function startsWithMagic(bytes: Uint8Array): boolean {
  return bytes.length >= MAGIC.length && MAGIC.every((b, i) => bytes[i] === b);
}

function unreadable(why: string): never {
  throw new AgentError('AGENT_BOOTSTRAP_UNREADABLE', why);
}

/** A path as quoted in a message: JSON-escaped and cut, so no control character reaches the log. */
function quotedPath(path: string): string {
  return JSON.stringify(path.length > 512 ? `${path.slice(0, 512)}…` : path);
}

function readFile(path: string): Uint8Array {
  try {
    if (statSync(path).size > MAX_BOOTSTRAP_BYTES * 2)
      unreadable(`the bootstrap file ${quotedPath(path)} is larger than ${MAX_BOOTSTRAP_BYTES * 2} bytes`);
    return readFileSync(path);
  } catch (err) {
    if (isCodedError(err)) throw err;
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    return unreadable(`the bootstrap file ${quotedPath(path)} cannot be read (${code})`);
  }
}

/**
 * Text that can only be a file path: one line starting with `/`, `./`, `../` or `~/`, or ending in `.json`,
 * `.oapp` or `.txt`. Base64 of a JSON bootstrap starts with `W` or `e` and has no `.`; JSON starts with `[`/`{`;
 * so a missing file is reported with its path, and other text never is (it may be a secret).
 */
function isPathLike(text: string): boolean {
  if (text.length > 4096 || /[\r\n]/.test(text)) return false;
  return /^(?:\/|\.{1,2}\/|~\/)/.test(text) || /\.(?:json|oapp|txt)$/i.test(text);
}

function looksLikePath(text: string): boolean {
  return text.length <= 4096 && !text.includes('\n') && existsSync(text);
}

/** Trims what SPEC.md §9 trims (ASCII whitespace) and decodes Base64; undefined when it is not Base64. */
function encryptedBytes(input: string | Uint8Array): Uint8Array | undefined {
  if (typeof input !== 'string') return input;
  try {
    return decodeBase64(input.replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, ''), 'AGENT_BOOTSTRAP');
  } catch {
    return undefined; // openEncryptedBootstrap reports it (FORMAT_BAD_BASE64)
  }
}

/**
 * With administrators: an encrypted bootstrap without any signature record is `AGENT_BOOTSTRAP_UNSIGNED`, decided on
 * its unauthenticated prefix before any stanza is opened (records of other keys are the library's
 * `POLICY_SIGNER_THRESHOLD_NOT_MET`, checked before any stanza too).
 */
async function requireRecords(input: string | Uint8Array): Promise<void> {
  const bytes = encryptedBytes(input);
  if (bytes === undefined) return;
  let records: number;
  try {
    records = (await inspectPackage(bytes)).signatures.length;
  } catch {
    return; // a malformed package: openEncryptedBootstrap names the defect with its code
  }
  if (records === 0)
    throw new AgentError(
      'AGENT_BOOTSTRAP_UNSIGNED',
      'the encrypted bootstrap carries no signature record, and AGENT_BOOTSTRAP_ADMIN_KEYS (or _FILE) is set: ' +
        'encrypt it with administrator signatures (oapp encrypt-bootstrap --sign-key)',
    );
}

async function decrypt(
  input: string | Uint8Array,
  key: KeyTuple | undefined,
  trust: BootstrapTrustOptions,
): Promise<{ bytes: Uint8Array; trust: BootstrapTrust }> {
  if (key === undefined) {
    throw new AgentError(
      'AGENT_BOOTSTRAP_SECRETKEY_MISSING',
      'the bootstrap is encrypted: set AGENT_BOOTSTRAP_SECRETKEY to <sender public key hex>/<secret key hex>',
    );
  }
  const administrators = trust.administrators;
  if (administrators !== undefined) await requireRecords(input);
  let verified: Awaited<ReturnType<typeof openEncryptedBootstrap>>;
  try {
    const opened = await openEncryptedBootstrap(input, key, { administrators, now: trust.now });
    if (administrators === undefined)
      return {
        bytes: opened.content,
        trust: { signature: opened.signatureRecords > 0 ? 'signed, not checked' : 'unsigned' },
      };
    verified = opened;
  } catch (err) {
    if (!isCodedError(err)) throw err;
    // S46: the library message carries no key or ciphertext; add which variable was used.
    const context =
      administrators !== undefined && err.code.startsWith('POLICY_SIG')
        ? 'the encrypted bootstrap is refused: AGENT_BOOTSTRAP_ADMIN_KEYS (or _FILE) is set'
        : err.code === 'POLICY_EXPIRED'
          ? 'the encrypted bootstrap is refused'
          : 'the encrypted bootstrap cannot be opened with AGENT_BOOTSTRAP_SECRETKEY';
    throw withContext(err, context);
  }
  // Its signed sequence against the floor and the newest bootstrap accepted (ADR 0147), before it is parsed.
  return {
    bytes: verified.content,
    trust: {
      signature: 'verified',
      sequence: verified.release.sequence ?? undefined,
      createdAt: verified.release.createdAt,
      expiresAt: verified.release.expiresAt,
      signers: verified.signers.additional.map((s) => s.id),
      rollback: checkBootstrapRelease(verified.release.sequence, verified.content, trust.rollback ?? {}),
    },
  };
}

/** The signature file's text, or undefined when there is none at `path`. */
function readSignature(path: string): Uint8Array | undefined {
  try {
    if (statSync(path).size > MAX_BOOTSTRAP_SIGNATURE_BYTES)
      unreadable(
        `the bootstrap signature file ${quotedPath(path)} is larger than ${MAX_BOOTSTRAP_SIGNATURE_BYTES} bytes`,
      );
    return readFileSync(path);
  } catch (err) {
    if (isCodedError(err)) throw err;
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    return unreadable(`the bootstrap signature file ${quotedPath(path)} cannot be read (${code})`);
  }
}

/**
 * A plain bootstrap's detached signature (issue 29 §2): with administrators, `signed` (the bootstrap's exact bytes)
 * must be signed by K of them in `path` before a byte of it is parsed; without, the file's presence is reported.
 */
function checkPlain(
  signed: Uint8Array,
  path: string | undefined,
  trust: BootstrapTrustOptions,
): BootstrapTrust {
  const sig = path === undefined ? undefined : readSignature(path);
  const administrators = trust.administrators;
  if (administrators === undefined)
    return { signature: sig === undefined ? 'unsigned' : 'signed, not checked', signatureFile: path };
  if (sig === undefined) {
    const where =
      path === undefined
        ? 'the bootstrap is given as text, so AGENT_BOOTSTRAP_SIGNATURE must name its signature file'
        : `no signature file ${quotedPath(path)}`;
    throw new AgentError(
      'AGENT_BOOTSTRAP_UNSIGNED',
      `the bootstrap is not signed, and AGENT_BOOTSTRAP_ADMIN_KEYS (or _FILE) is set: ${where} (oapp sign-bootstrap makes one)`,
    );
  }
  let info: ReturnType<typeof verifyBootstrapSignature>;
  try {
    info = verifyBootstrapSignature(signed, sig, { administrators, now: trust.now });
  } catch (err) {
    if (!isCodedError(err)) throw err;
    const context =
      err.code === 'POLICY_EXPIRED'
        ? `the signed bootstrap is refused (signature file ${quotedPath(path!)})`
        : `the bootstrap signature file ${quotedPath(path!)} does not verify the bootstrap`;
    throw withContext(err, context);
  }
  return {
    signature: 'verified',
    signatureFile: path,
    sequence: info.sequence,
    createdAt: info.createdAt,
    expiresAt: info.expiresAt,
    signers: info.signers.additional.map((s) => s.id),
    // Its signed sequence against the floor and the newest bootstrap accepted (ADR 0147), before it is parsed.
    rollback: checkBootstrapRelease(info.sequence, signed, trust.rollback ?? {}),
  };
}

/** A log line of the start-up report: its message and fields. */
export interface ReportLine {
  readonly msg: string;
  readonly fields: Fields;
}

/**
 * The start-up report's `bootstrap` line (issue 29 §2, ADR 0147): the form and the signature state; for a verified
 * signature its release fields, the signers, the rollback verdict and what it was checked against. `warning`: the
 * `deliberate bootstrap downgrade` line, when `AGENT_BOOTSTRAP_ALLOW_DOWNGRADE_TO` let an older bootstrap in.
 */
export function bootstrapReport(
  form: BootstrapForm | undefined,
  trust: BootstrapTrust,
): { line: ReportLine; warning?: ReportLine | undefined } {
  const r = trust.rollback;
  const fields = {
    ...(form === undefined ? {} : { form }),
    signature: trust.signature,
    ...(trust.signatureFile === undefined ? {} : { signatureFile: trust.signatureFile }),
    // Names only: what the environment or AGENT_SECRETS_FROM supplied, outside the signature's cover.
    ...(trust.variables === undefined ? {} : { variables: trust.variables.join(',') || 'none' }),
    ...(trust.signature !== 'verified'
      ? { rollback: 'not checked (no administrator keys)' }
      : {
          sequence: trust.sequence ?? 'none (format v1)',
          createdAt: trust.createdAt,
          expiresAt: trust.expiresAt ?? 'none',
          signers: (trust.signers ?? []).join(','),
          ...(r === undefined
            ? {}
            : {
                verdict: r.verdict,
                ...(r.allowDowngradeTo === undefined ? {} : { allowDowngradeTo: r.allowDowngradeTo }),
                rollback: r.state,
              }),
        }),
  };
  const warning =
    r?.verdict !== 'allowed-downgrade'
      ? undefined
      : {
          msg: 'deliberate bootstrap downgrade',
          fields: {
            sequence: trust.sequence,
            newestBefore: r.newestBefore,
            detail:
              `AGENT_BOOTSTRAP_ALLOW_DOWNGRADE_TO accepts the signed bootstrap of sequence ${trust.sequence} although ` +
              `sequence ${r.newestBefore ?? '?'} was accepted before; it becomes the remembered newest once start-up ` +
              'succeeds (unset the variable once done)',
          },
        };
  return { line: { msg: 'bootstrap', fields }, warning };
}

function fromText(text: string): { bytes: Uint8Array; form: BootstrapForm } | undefined {
  const t = text.trim();
  if (t.startsWith('[') || t.startsWith('{')) return { bytes: new TextEncoder().encode(t), form: 'json' };
  try {
    return { bytes: decodeBase64(t, 'AGENT_BOOTSTRAP'), form: 'base64' };
  } catch {
    return undefined;
  }
}

type Resolved = { bytes: Uint8Array; form: BootstrapForm; trust: BootstrapTrust };

async function resolveBytes(
  source: string,
  key: KeyTuple | undefined,
  trust: BootstrapTrustOptions,
): Promise<Resolved> {
  if (isEncryptedBootstrapText(source)) return { ...(await decrypt(source, key, trust)), form: 'encrypted' };
  if (looksLikePath(source)) {
    const file = readFile(source);
    if (startsWithMagic(file)) return { ...(await decrypt(file, key, trust)), form: 'encrypted-file' };
    let text: string;
    try {
      text = utf8.decode(file);
    } catch {
      return unreadable('the bootstrap file is neither UTF-8 text nor an encrypted bootstrap');
    }
    if (isEncryptedBootstrapText(text))
      return { ...(await decrypt(text, key, trust)), form: 'encrypted-file' };
    // The signature covers the file's exact bytes, checked before they are parsed.
    const checked = checkPlain(file, trust.signaturePath ?? `${source}.sig`, trust);
    return { bytes: fromText(text)?.bytes ?? file, form: 'file', trust: checked };
  }
  if (isPathLike(source.trim())) unreadable(`the bootstrap file ${quotedPath(source.trim())} does not exist`);
  const plain =
    fromText(source) ??
    unreadable('the bootstrap is not an existing file path, Base64 JSON text or an encrypted bootstrap');
  // Text: the signature covers the decoded Base64, or the JSON text exactly as given.
  const signed = plain.form === 'base64' ? plain.bytes : new TextEncoder().encode(source);
  return { ...plain, trust: checkPlain(signed, trust.signaturePath, trust) };
}

/**
 * Reads the bootstrap from a file path, Base64 text, JSON text or encrypted text (docs/interfaces.md §3), opens an
 * encrypted one with `AGENT_BOOTSTRAP_SECRETKEY`, replaces its `${NAME}` references with `variables` (after the
 * JSON is parsed, before the schema: ADR 0059), and validates it with the compiler's schema and rules. Nothing
 * inside it is decrypted (S49): a `-2/` string that came from a variable stays encrypted until
 * `getRestrictedDataFromHost`.
 * With administrator keys (`trust.administrators`) the bootstrap's signature is checked first, before anything
 * else is read from it: a plain bootstrap's detached `.sig` file, an encrypted bootstrap's signature records; then
 * its signed sequence against `trust.rollback` (ADR 0147: nothing is written here, see `rememberBootstrapRelease`);
 * then a `${NAME}` reference in a trust-bearing position (`keys`, `packaging`, `remoteConfiguration`, grants, …) is
 * refused, because the signature covers the reference and not its value (`AGENT_BOOTSTRAP_UNSIGNED`).
 * @throws {@link AgentError} `AGENT_BOOTSTRAP_UNREADABLE`, `AGENT_BOOTSTRAP_SECRETKEY_MISSING`,
 *   `AGENT_BOOTSTRAP_UNSIGNED` (also for a variable in a trust-bearing position of a verified bootstrap); coded errors from oapp-format (`FORMAT_*`, `CRYPTO_*`, `POLICY_*`, among them
 *   `POLICY_SIGNATURE_INVALID`, `POLICY_SIGNER_THRESHOLD_NOT_MET`, `CRYPTO_CONTENT_MISMATCH` and `POLICY_EXPIRED`
 *   of a signature, `POLICY_BELOW_MINIMUM`, `POLICY_ROLLBACK`, `POLICY_SEQUENCE_REUSED` of its sequence),
 *   `AGENT_RELEASE_STATE_UNREADABLE`, and workflow-compiler (`WORKFLOW_*`, including `WORKFLOW_VARIABLE_MISSING` naming the variable).
 */
export async function loadBootstrap(
  source: string,
  key: KeyTuple | undefined,
  variables: BootstrapVariables = NO_VARIABLES,
  trustOptions: BootstrapTrustOptions = {},
): Promise<LoadedBootstrap> {
  const { bytes, form, trust } = await resolveBytes(source, key, trustOptions);
  // A verified signature covers `${NAME}`, not its value: none may stand where it decides trust (ADR 0147).
  if (trust.signature === 'verified') refuseTrustBearingReferences(bytes);
  const { bootstrap, used } = validateBootstrapWithVariables(bytes, variables.values, {
    forbidden: FORBIDDEN_VARIABLES,
  });
  const secrets = used.filter((n) => variables.secretNames.has(n)).map((n) => variables.values.get(n)!);
  return { bootstrap, form, secrets, trust: { ...trust, variables: used } };
}
