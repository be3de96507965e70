import { readFileSync, statSync } from 'node:fs';
import { basename, extname } from 'node:path';
import {
  derivePublicKey,
  expectKey,
  parseKey,
  parseKeyTuple,
  type Key,
  type KeyPurpose,
  type KeySpec,
  type KeyTuple,
  type KeyType,
} from '@org/envelope-crypto';
import { parseStrictJson } from '@org/workflow-compiler';
import { loadedKeys } from './cleanup.js';
import { asUsage, CliError, EXIT_USAGE } from './errors.js';

/** The environment the command reads key variables from. */
export type Env = Readonly<Record<string, string | undefined>>;

/** A key source naming an environment variable: `env://NAME`. Anything else is a file path. */
export const ENV_SCHEME = 'env://';
/** Largest key file read. */
export const MAX_KEY_FILE_BYTES = 64 * 1024;
/** Aliases of `GET /key-gen` accepted in key-gen JSON files (docs/interfaces.md §1.5). */
// A Map, not an object literal: a purpose read from a key file must not find an inherited `toString`.
const PURPOSE_ALIASES: ReadonlyMap<string, string> = new Map([
  ['box', 'authenticated'],
  ['secretbox', 'symmetric'],
]);

/** What a key option needs. */
export interface KeyWant {
  readonly purpose: KeyPurpose;
  readonly type: KeyType;
}

/** A key read from a source, with the id used in policies and messages. */
export interface LoadedKey {
  readonly key: Key;
  readonly id: string;
}


function sourceError(where: string, why: string): CliError {
  return new CliError('CLI_KEY_SOURCE', `${where}: ${why}`, EXIT_USAGE);
}

type Warn = (message: string) => void;

/** The text of a key source (a file, or `env://NAME`), with a default id, a name for messages and its mode. */
interface Source {
  readonly text: string;
  readonly id: string;
  readonly where: string;
  /** `file` or `variable`, for messages. */
  readonly kind: 'file' | 'variable';
  /** The file's permission bits (undefined for a variable). */
  readonly mode?: number;
}

function readSource(src: string, env: Env, flag: string): Source {
  const where = `${flag} ${src}`;
  if (src.startsWith(ENV_SCHEME)) {
    const name = src.slice(ENV_SCHEME.length);
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw sourceError(where, 'not a valid variable name');
    const text = env[name];
    if (text === undefined || text.trim() === '') throw sourceError(where, `${name} is not set`);
    return { text, id: name, where, kind: 'variable' };
  }
  if (src === '' || src === '-') throw sourceError(where, 'a key source is a file path or env://NAME');
  let size: number;
  let mode: number;
  try {
    const s = statSync(src);
    if (!s.isFile()) throw sourceError(where, 'not a regular file');
    size = s.size;
    mode = s.mode & 0o777;
  } catch (err) {
    if (err instanceof CliError) throw err;
    throw sourceError(
      where,
      (err as { code?: unknown }).code === 'ENOENT' ? 'no such file' : 'cannot be read',
    );
  }
  if (size > MAX_KEY_FILE_BYTES) throw sourceError(where, `larger than ${MAX_KEY_FILE_BYTES} bytes`);
  let text: string;
  try {
    text = readFileSync(src, 'utf8');
  } catch {
    throw sourceError(where, 'cannot be read');
  }
  return { text, id: basename(src, extname(src)), where, kind: 'file', mode };
}

/**
 * Warns when a file that holds secret key material can be read by group or others (a warning, not a refusal:
 * shared CI runners often cannot set modes). Decided by what the file holds, not by the option it was given to:
 * a public key file is meant to be readable (issue 27), and a secret key file given where its public half is
 * wanted is still a secret on disk.
 */
function warnIfExposed(src: string, source: Source, warn: Warn): void {
  if (source.mode !== undefined && (source.mode & 0o077) !== 0)
    warn(`${src} can be read by other users (mode ${source.mode.toString(8)}); chmod 600 it`);
}

function field(obj: Record<string, unknown>, name: string): unknown {
  return Object.prototype.hasOwnProperty.call(obj, name) ? obj[name] : undefined;
}

/** A key spec read from a source, and whether the source holds secret key material. */
interface SourceSpec {
  readonly spec: KeySpec;
  /** A secret key record where the public half is wanted: derive it. */
  readonly derive: boolean;
  readonly holdsSecret: boolean;
}

/**
 * The key spec in a source's text: a key record `{id?, purpose, type, keyHex}` (docs/interfaces.md §2), the JSON of
 * `GET /key-gen` (`{purpose, keyPair: {publicKeyHex, secretKeyHex}}`), or bare hex of the wanted key.
 */
function specOf(text: string, want: KeyWant, id: string, where: string): SourceSpec {
  const t = text.trim();
  // Bare hex does not say which half it is: taken as the wanted one.
  if (/^[0-9a-fA-F]+$/.test(t))
    return { spec: { id, ...want, keyHex: t }, derive: false, holdsSecret: want.type === 'secret' };
  if (!t.startsWith('{')) throw sourceError(where, 'not a key record, key-gen JSON or hex');
  let value: unknown;
  try {
    value = parseStrictJson(t, { maxBytes: MAX_KEY_FILE_BYTES });
  } catch {
    throw sourceError(where, 'not valid JSON');
  }
  const obj = value as Record<string, unknown>;
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw sourceError(where, 'not a JSON object');
  const pair = field(obj, 'keyPair');
  if (pair !== undefined) {
    const p = pair as Record<string, unknown>;
    const raw = field(obj, 'purpose');
    const purpose = typeof raw === 'string' ? (PURPOSE_ALIASES.get(raw) ?? raw) : '';
    const isObject = typeof pair === 'object' && pair !== null;
    const hex = isObject ? field(p, `${want.type}KeyHex`) : undefined;
    if (typeof hex !== 'string') throw sourceError(where, `has no ${want.type} key`);
    const holdsSecret = typeof field(p, 'secretKeyHex') === 'string';
    return { spec: { id, purpose, type: want.type, keyHex: hex }, derive: false, holdsSecret };
  }
  const [rid, purpose, type, keyHex] = ['id', 'purpose', 'type', 'keyHex'].map((k) => field(obj, k));
  if (typeof purpose !== 'string' || typeof type !== 'string' || typeof keyHex !== 'string')
    throw sourceError(where, 'a key record needs string purpose, type and keyHex');
  const spec = { id: typeof rid === 'string' && rid !== '' ? rid : id, purpose, type, keyHex };
  // A secret key file also serves where its public half is wanted (like `age-keygen -y`).
  return { spec, derive: want.type === 'public' && type === 'secret', holdsSecret: type === 'secret' };
}

/**
 * A public key record given where a secret key is wanted (`--packager-key author.pub`): say so, rather than
 * warn about the file's mode, which is right for a public key (issue 27).
 */
function refusePublicForSecret(source: Source, spec: KeySpec, want: KeyWant): void {
  if (want.type !== 'secret' || spec.type !== 'public') return;
  throw new CliError(
    'CRYPTO_WRONG_KEY_TYPE',
    `${source.where}: this ${source.kind} holds a public key, and a secret key is needed here` +
      (source.kind === 'file' ? ' (oapp keygen writes the secret half to the .key file)' : ''),
    EXIT_USAGE,
  );
}

/**
 * Reads one key from `src` (a file path or `env://NAME`) and checks it fits `want`.
 * @param flag the option it came from (for messages).
 * @throws {@link CliError} `CLI_KEY_SOURCE`; `CRYPTO_*` codes (malformed key, wrong purpose or type) as usage errors.
 */
export async function loadKey(
  src: string,
  want: KeyWant,
  flag: string,
  env: Env,
  warn: Warn,
): Promise<LoadedKey> {
  const source = readSource(src, env, flag);
  const { id, where } = source;
  const { spec, derive, holdsSecret } = specOf(source.text, want, id, where);
  refusePublicForSecret(source, spec, want);
  if (holdsSecret) warnIfExposed(src, source, warn);
  const key = await asUsage(where, () => {
    const parsed = parseKey(spec);
    if (parsed.type === 'secret') loadedKeys.push(parsed.bytes);
    return derive ? derivePublicKey(parsed) : parsed;
  });
  // The message names the option and the key id: "--signer: key "x" has purpose authenticated, expected sign".
  await asUsage('', () => expectKey(key, want.purpose, want.type, `${flag} ${src}`));
  return { key, id: spec.id ?? id };
}

/** {@link loadKey} for every source of a repeatable option. */
export async function loadKeys(
  srcs: readonly string[],
  want: KeyWant,
  flag: string,
  env: Env,
  warn: Warn,
): Promise<LoadedKey[]> {
  const out: LoadedKey[] = [];
  for (const src of srcs) out.push(await loadKey(src, want, flag, env, warn));
  return out;
}

/**
 * Reads a `<sender public key hex>/<secret key hex>` tuple (the `AGENT_BOOTSTRAP_SECRETKEY` form) from a file or
 * `env://NAME`.
 * @throws {@link CliError} `CLI_KEY_SOURCE`, `CRYPTO_BAD_KEY_TUPLE` (usage).
 */
export async function loadKeyTuple(src: string, flag: string, env: Env, warn: Warn): Promise<KeyTuple> {
  const source = readSource(src, env, flag);
  warnIfExposed(src, source, warn);
  return asUsage(source.where, () => {
    const tuple = parseKeyTuple(source.text.trim());
    loadedKeys.push(tuple.recipientSecretKey);
    return tuple;
  });
}

/** One administrator key (a `sign` public key) with the id it is reported under. */
export interface AdminKey {
  readonly id: string;
  readonly publicKey: Uint8Array;
}

/** A list of 64-hex keys: comma- or line-separated, `#` comments and blank lines ignored (the agent's form). */
function hexList(text: string): string[] | undefined {
  const words = text
    .split('\n')
    .map((line) => line.replace(/#.*$/, ''))
    .join(',')
    .split(/[\s,]+/)
    .filter((w) => w !== '');
  return words.length > 0 && words.every((w) => /^[0-9a-fA-F]{64}$/.test(w)) ? words : undefined;
}

/**
 * Reads administrator keys (Ed25519 `sign` public keys) from each source: a key record or key-gen JSON (a secret
 * record gives its public half), bare hex, or — the form of the agent's `AGENT_BOOTSTRAP_ADMIN_KEYS` and
 * `AGENT_BOOTSTRAP_ADMIN_KEYS_FILE` — several 64-hex keys separated by commas or lines, with `#` comments.
 * A key of a list of several is reported as `<source id>#<n>`.
 * @throws {@link CliError} `CLI_KEY_SOURCE`; `CRYPTO_*` codes as usage errors.
 */
export async function loadAdminKeys(
  srcs: readonly string[],
  flag: string,
  env: Env,
  warn: Warn,
): Promise<AdminKey[]> {
  const out: AdminKey[] = [];
  for (const src of srcs) {
    const source = readSource(src, env, flag);
    const list = source.text.trim().startsWith('{') ? undefined : hexList(source.text);
    if (list === undefined) {
      const k = await loadKey(src, { purpose: 'sign', type: 'public' }, flag, env, warn);
      out.push({ id: k.id, publicKey: k.key.bytes });
      continue;
    }
    for (const [i, keyHex] of list.entries()) {
      const id = list.length === 1 ? source.id : `${source.id}#${i + 1}`;
      const key = await asUsage(`${source.where}, key ${i + 1}`, () =>
        parseKey({ id, purpose: 'sign', type: 'public', keyHex }),
      );
      out.push({ id, publicKey: key.bytes });
    }
  }
  return out;
}
