import { existsSync, readFileSync, statSync } from 'node:fs';
import { decodeBase64, type KeyTuple } from '@org/envelope-crypto';
import { MAGIC, MAX_BOOTSTRAP_BYTES, decryptBootstrap, isEncryptedBootstrapText } from '@org/oapp-format';
import { validateBootstrapWithVariables, type Bootstrap } from '@org/workflow-compiler';
import { AgentError, isCodedError } from '@org/workflow-runtime';
import { withContext } from '@org/workflow-runtime/internal';
import { FORBIDDEN_VARIABLES, type BootstrapVariables } from './variables.js';

/** How the bootstrap was given (logged at start; never the content). */
export type BootstrapForm = 'file' | 'base64' | 'json' | 'encrypted' | 'encrypted-file';

/** A validated, normalised bootstrap and the form it came in. */
export interface LoadedBootstrap {
  readonly bootstrap: Bootstrap;
  readonly form: BootstrapForm;
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

async function decrypt(input: string | Uint8Array, key: KeyTuple | undefined): Promise<Uint8Array> {
  if (key === undefined) {
    throw new AgentError(
      'AGENT_BOOTSTRAP_SECRETKEY_MISSING',
      'the bootstrap is encrypted: set AGENT_BOOTSTRAP_SECRETKEY to <sender public key hex>/<secret key hex>',
    );
  }
  try {
    return await decryptBootstrap(input, key);
  } catch (err) {
    if (!isCodedError(err)) throw err;
    // S46: the library message carries no key or ciphertext; add which variable was used.
    throw withContext(err, 'the encrypted bootstrap cannot be opened with AGENT_BOOTSTRAP_SECRETKEY');
  }
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

async function resolveBytes(
  source: string,
  key: KeyTuple | undefined,
): Promise<{ bytes: Uint8Array; form: BootstrapForm }> {
  if (isEncryptedBootstrapText(source)) return { bytes: await decrypt(source, key), form: 'encrypted' };
  if (looksLikePath(source)) {
    const file = readFile(source);
    if (startsWithMagic(file)) return { bytes: await decrypt(file, key), form: 'encrypted-file' };
    let text: string;
    try {
      text = utf8.decode(file);
    } catch {
      return unreadable('the bootstrap file is neither UTF-8 text nor an encrypted bootstrap');
    }
    if (isEncryptedBootstrapText(text)) return { bytes: await decrypt(text, key), form: 'encrypted-file' };
    return { bytes: fromText(text)?.bytes ?? file, form: 'file' };
  }
  if (isPathLike(source.trim())) unreadable(`the bootstrap file ${quotedPath(source.trim())} does not exist`);
  return (
    fromText(source) ??
    unreadable('the bootstrap is not an existing file path, Base64 JSON text or an encrypted bootstrap')
  );
}

/**
 * Reads the bootstrap from a file path, Base64 text, JSON text or encrypted text (docs/interfaces.md §3), opens an
 * encrypted one with `AGENT_BOOTSTRAP_SECRETKEY`, replaces its `${NAME}` references with `variables` (after the
 * JSON is parsed, before the schema: ADR 0059), and validates it with the compiler's schema and rules. Nothing
 * inside it is decrypted (S49): a `-2/` string that came from a variable stays encrypted until
 * `getRestrictedDataFromHost`.
 * @throws {@link AgentError} `AGENT_BOOTSTRAP_UNREADABLE`, `AGENT_BOOTSTRAP_SECRETKEY_MISSING`; coded errors
 *   from oapp-format (`FORMAT_*`, `CRYPTO_*`, `POLICY_*`) and workflow-compiler (`WORKFLOW_*`, including
 *   `WORKFLOW_VARIABLE_MISSING` naming the variable).
 */
export async function loadBootstrap(
  source: string,
  key: KeyTuple | undefined,
  variables: BootstrapVariables = NO_VARIABLES,
): Promise<LoadedBootstrap> {
  const { bytes, form } = await resolveBytes(source, key);
  const { bootstrap, used } = validateBootstrapWithVariables(bytes, variables.values, {
    forbidden: FORBIDDEN_VARIABLES,
  });
  const secrets = used.filter((n) => variables.secretNames.has(n)).map((n) => variables.values.get(n)!);
  return { bootstrap, form, secrets };
}
