import {
  assertStrongPublicKey,
  isCryptoError,
  parseKeyTuple,
  parseKeyTupleList,
  type KeyTuple,
} from '@org/envelope-crypto';
import {
  DEFAULT_SANDBOX_IDLE_MS,
  MAX_LIMITS as ENGINE_MAX_LIMITS,
  MAX_POOLED_WORKERS,
  MAX_SANDBOX_IDLE_MS,
  MAX_SANDBOX_WORKERS,
} from '@org/workflow-engine';
import {
  AgentError,
  DEFAULT_LIMITS,
  DEFAULT_TCP_LIMITS,
  DEFAULT_TIMEOUTS,
  LOG_LEVELS,
  type Limits,
  type LogLevel,
  type TcpLimits,
  type Timeouts,
} from '@org/workflow-runtime';
import { readFileSync, statSync } from 'node:fs';
import { flagIsOff } from './args.js';
import { resolve } from 'node:path';

/** Everything the agent reads from its environment, validated once at start (docs/engineering.md §1). */
export interface Config {
  /** `AGENT_BOOTSTRAP` or the first argument (argument wins): a file path, Base64 JSON or encrypted text. */
  readonly bootstrap: string;
  /** `AGENT_BOOTSTRAP_SECRETKEY`, parsed; needed only for an encrypted bootstrap. Never log it. */
  readonly bootstrapSecretKey: KeyTuple | undefined;
  /**
   * `AGENT_BOOTSTRAP_ADMIN_KEYS` or `AGENT_BOOTSTRAP_ADMIN_KEYS_FILE` with `AGENT_BOOTSTRAP_ADMIN_THRESHOLD`: the
   * administrators whose signatures a bootstrap must carry (S173, ADR 0144). Absent: bootstraps are not checked.
   */
  readonly bootstrapAdministrators?: BootstrapAdministrators | undefined;
  /**
   * `AGENT_BOOTSTRAP_MINIMUM_SEQUENCE`: the lowest signed bootstrap sequence accepted (ADR 0147); needs no data
   * directory. Only with administrator keys (only their signature makes a bootstrap's sequence known).
   */
  readonly bootstrapMinimumSequence?: number | undefined;
  /**
   * `AGENT_BOOTSTRAP_ALLOW_DOWNGRADE_TO`: the operator's deliberate downgrade: a signed bootstrap of exactly this
   * sequence is accepted although older than the newest accepted (ADR 0147). Only with administrator keys.
   */
  readonly bootstrapAllowDowngradeTo?: number | undefined;
  /** `AGENT_BOOTSTRAP_SIGNATURE`: the detached signature file of a plain bootstrap (default `<bootstrap file>.sig`). */
  readonly bootstrapSignature?: string | undefined;
  /** `AGENT_STRING_SECRETKEYS`, parsed at start (S45); used only inside getRestrictedDataFromHost. */
  readonly stringSecretKeys: readonly KeyTuple[];
  readonly allowUnpackaged: boolean;
  readonly allowPrivateNetworkHosts: readonly string[];
  readonly limits: Limits;
  readonly timeouts: Timeouts;
  /** `LOG_LEVEL` (`debug`, `info`, `warn`, `error`); absent means `info`. */
  readonly logLevel?: LogLevel | undefined;
  /**
   * `AGENT_DATA_DIR` (default `./agent-data`), absolute: step persistence files and the remembered newest release
   * of each package (ADR 0144) live under it. `off` (and tests that give none): no data directory, so a deployment
   * with persistence is refused at start-up and rollback is checked only against `packaging.minimumSequence`.
   */
  readonly dataDir?: string | undefined;
  /** `AGENT_TCP_*`: bounds of `tcp` trigger servers (absent: the runtime's defaults). */
  readonly tcp?: TcpLimits | undefined;
  /**
   * The admin listener (`/health`, `/ready`, `/metrics`): `AGENT_ADMIN_PORT` (default 39576, `off` disables it)
   * and `AGENT_ADMIN_BIND` (default 127.0.0.1). Absent (tests): no admin listener.
   */
  readonly admin?: AdminListen | 'off' | undefined;
  /**
   * `AGENT_SANDBOX_WORKERS`: sandbox workers kept for top-level runs (engine `setSandboxWorkers`); absent means the
   * engine's default (one per available core, 2 to 8).
   */
  readonly sandboxWorkers?: number | undefined;
  /**
   * `AGENT_SANDBOX_IDLE_MS`: how long an idle sandbox worker is kept before it ends (engine `setSandboxIdleMs`);
   * `0` keeps idle workers; absent means the engine's default (5 minutes).
   */
  readonly sandboxIdleMs?: number | undefined;
  /**
   * `AGENT_OPTIMIZE_FOR_SIZE` (default false): `true` sets V8's `--optimize-for-size` at start, so the heaps grow by
   * small steps and are collected sooner, at a CPU cost on large uploads (ADR 0119). Absent (tests): left as it is.
   */
  readonly optimizeForSize?: boolean | undefined;
  /**
   * `AGENT_HEAP_GROWTH_PERCENT` (default {@link DEFAULT_HEAP_GROWTH_PERCENT}): after each full collection V8 lets a
   * heap's old generation grow to what is live × (1 + this / 100) before the next one, in the main thread and the
   * sandbox workers; `0` leaves V8's own factor (up to 4× for the main thread). ADR 0122. Absent (tests): left as it is.
   */
  readonly heapGrowthPercent?: number | undefined;
}

/** Administrator keys of signed bootstraps (§2 of issue 29): K of these Ed25519 public keys must sign. */
export interface BootstrapAdministrators {
  /** Ids `AGENT_BOOTSTRAP_ADMIN_KEYS[i]` (or `AGENT_BOOTSTRAP_ADMIN_KEYS_FILE line n`), 32-byte public keys. */
  readonly keys: readonly { readonly id: string; readonly publicKey: Uint8Array }[];
  /** `AGENT_BOOTSTRAP_ADMIN_THRESHOLD`: 1 … keys.length (default 1). */
  readonly threshold: number;
}

/** Where the admin listener listens. */
export interface AdminListen {
  readonly port: number;
  readonly bind: string;
}

export const DEFAULT_ADMIN_PORT = 39576;
export const DEFAULT_ADMIN_BIND = '127.0.0.1';

export { DEFAULT_LIMITS, DEFAULT_TIMEOUTS, type Limits, type Timeouts };

/** `AGENT_DATA_DIR` when unset, relative to the working directory. */
export const DEFAULT_DATA_DIR = 'agent-data';
/** ADR 0122: the old generation may grow to 1.6 × what is live between full collections. */
export const DEFAULT_HEAP_GROWTH_PERCENT = 60;
/** The largest `AGENT_HEAP_GROWTH_PERCENT`: 4 × live, V8's own largest factor. */
export const MAX_HEAP_GROWTH_PERCENT = 300;

type Env = Readonly<Record<string, string | undefined>>;

function invalid(name: string, what: string): never {
  throw new AgentError('AGENT_CONFIG_INVALID', `${name} ${what}`);
}

function positiveInt(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^[0-9]{1,15}$/.test(raw) || Number(raw) <= 0) invalid(name, 'must be a positive integer');
  return Number(raw);
}

function boundedInt(env: Env, name: string, fallback: number, max: number): number {
  const value = positiveInt(env, name, fallback);
  if (value > max) invalid(name, `must be at most ${max}`);
  return value;
}

/** An integer from 0 to `max` (0 is a value here, not "unset"). */
function zeroToMax(env: Env, name: string, fallback: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^[0-9]{1,15}$/.test(raw)) invalid(name, 'must be a non-negative integer');
  if (Number(raw) > max) invalid(name, `must be at most ${max}`);
  return Number(raw);
}

function flag(env: Env, name: string): boolean {
  const raw = env[name];
  if (flagIsOff(raw)) return false;
  if (raw === 'true') return true;
  return invalid(name, 'must be true or false');
}

function idList(env: Env, name: string): string[] {
  return (env[name] ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

function logLevel(env: Env): LogLevel {
  const raw = (env['LOG_LEVEL'] ?? '').trim().toLowerCase();
  if (raw === '') return 'info';
  const level = LOG_LEVELS.find((l) => l === raw);
  return level ?? invalid('LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}`);
}

/** Re-labels a key-tuple error with the variable's name; the library message has no key material. */
function keyError(name: string, err: unknown): never {
  if (isCryptoError(err))
    throw new AgentError('AGENT_CONFIG_INVALID', `${name}: ${err.message}`, { cause: err });
  throw err;
}

function bootstrapKey(env: Env): KeyTuple | undefined {
  const raw = env['AGENT_BOOTSTRAP_SECRETKEY'];
  if (raw === undefined || raw.trim() === '') return undefined;
  try {
    return parseKeyTuple(raw.trim(), 1);
  } catch (err) {
    return keyError('AGENT_BOOTSTRAP_SECRETKEY', err);
  }
}

function stringKeys(env: Env): KeyTuple[] {
  try {
    return parseKeyTupleList(env['AGENT_STRING_SECRETKEYS'] ?? '');
  } catch (err) {
    return keyError('AGENT_STRING_SECRETKEYS', err);
  }
}

function dataDir(env: Env): string | undefined {
  const raw = env['AGENT_DATA_DIR'];
  if (raw !== undefined && raw.includes('\u0000')) invalid('AGENT_DATA_DIR', 'must not contain NUL');
  if (raw !== undefined && raw.trim().toLowerCase() === 'off') return undefined;
  return resolve(raw === undefined || raw.trim() === '' ? DEFAULT_DATA_DIR : raw);
}

/** Largest `AGENT_BOOTSTRAP_ADMIN_KEYS_FILE`: far more than any list of keys needs. */
const MAX_ADMIN_KEYS_FILE_BYTES = 64 * 1024;

/** A path as quoted in a message: JSON-escaped and cut, so no control character reaches the log. */
const quoted = (path: string): string => JSON.stringify(path.length > 512 ? `${path.slice(0, 512)}…` : path);

/** One administrator key: 64 hex digits of a canonical Ed25519 public key that is not of small order. */
function adminKey(text: string, id: string, where: string): { id: string; publicKey: Uint8Array } {
  if (!/^[0-9a-fA-F]{64}$/.test(text)) invalid(id, 'must be an Ed25519 public key of 64 hex digits');
  const publicKey = Uint8Array.from(Buffer.from(text, 'hex'));
  try {
    assertStrongPublicKey('sign', publicKey, id);
  } catch (err) {
    if (isCryptoError(err)) invalid(where, `holds an unusable key: ${err.message}`);
    throw err;
  }
  return { id, publicKey };
}

function adminKeysFile(path: string): { text: string; id: string }[] {
  const name = 'AGENT_BOOTSTRAP_ADMIN_KEYS_FILE';
  let text: string;
  try {
    if (statSync(path).size > MAX_ADMIN_KEYS_FILE_BYTES)
      invalid(name, `${quoted(path)} is larger than ${MAX_ADMIN_KEYS_FILE_BYTES} bytes`);
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if (err instanceof AgentError) throw err;
    return invalid(
      name,
      `${quoted(path)} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
  const out: { text: string; id: string }[] = [];
  text.split(/\r?\n/).forEach((line, i) => {
    const t = line.replace(/#.*$/, '').trim();
    if (t !== '') out.push({ text: t, id: `${name} line ${i + 1}` });
  });
  return out;
}

/**
 * `AGENT_BOOTSTRAP_ADMIN_KEYS` (comma-separated hex) or `AGENT_BOOTSTRAP_ADMIN_KEYS_FILE` (one key a line, `#`
 * comments and blank lines ignored), never both; `AGENT_BOOTSTRAP_ADMIN_THRESHOLD` from 1 to the number of keys
 * (default 1), and only with keys. A key listed twice is an error (it would count twice towards nothing: the
 * threshold counts distinct keys).
 */
function bootstrapAdministrators(env: Env): BootstrapAdministrators | undefined {
  // Set but blank (`AGENT_BOOTSTRAP_ADMIN_KEYS=`, or an unset shell variable in a unit file) must not switch the
  // check off: only an unset variable means "no administrators".
  for (const name of [
    'AGENT_BOOTSTRAP_ADMIN_KEYS',
    'AGENT_BOOTSTRAP_ADMIN_KEYS_FILE',
    'AGENT_BOOTSTRAP_ADMIN_THRESHOLD',
    'AGENT_BOOTSTRAP_MINIMUM_SEQUENCE',
  ])
    if (env[name] !== undefined && env[name].trim() === '')
      invalid(
        name,
        'is set but blank; unset it to run without it (a blank value never turns bootstrap signature checks off)',
      );
  const inline = (env['AGENT_BOOTSTRAP_ADMIN_KEYS'] ?? '').trim();
  const file = (env['AGENT_BOOTSTRAP_ADMIN_KEYS_FILE'] ?? '').trim();
  const rawThreshold = (env['AGENT_BOOTSTRAP_ADMIN_THRESHOLD'] ?? '').trim();
  if (inline !== '' && file !== '')
    invalid(
      'AGENT_BOOTSTRAP_ADMIN_KEYS',
      'and AGENT_BOOTSTRAP_ADMIN_KEYS_FILE are both set; set one of them',
    );
  if (inline === '' && file === '') {
    if (rawThreshold !== '')
      invalid('AGENT_BOOTSTRAP_ADMIN_THRESHOLD', 'is set without AGENT_BOOTSTRAP_ADMIN_KEYS or _FILE');
    return undefined;
  }
  const where = inline !== '' ? 'AGENT_BOOTSTRAP_ADMIN_KEYS' : 'AGENT_BOOTSTRAP_ADMIN_KEYS_FILE';
  const entries =
    inline !== ''
      ? inline
          .split(',')
          .map((t) => t.trim())
          .filter((t) => t !== '')
          .map((t, i) => ({ text: t, id: `AGENT_BOOTSTRAP_ADMIN_KEYS[${i}]` }))
      : adminKeysFile(resolve(file));
  if (entries.length === 0) invalid(where, 'holds no key');
  const keys = entries.map((e) => adminKey(e.text, e.id, where));
  const seen = new Map<string, string>();
  for (const k of keys) {
    const hex = Buffer.from(k.publicKey).toString('hex');
    const first = seen.get(hex);
    if (first !== undefined) invalid(where, `lists one key twice (${first} and ${k.id})`);
    seen.set(hex, k.id);
  }
  let threshold = 1;
  if (rawThreshold !== '') {
    if (!/^[0-9]{1,4}$/.test(rawThreshold) || Number(rawThreshold) < 1 || Number(rawThreshold) > keys.length)
      invalid(
        'AGENT_BOOTSTRAP_ADMIN_THRESHOLD',
        `must be an integer from 1 to ${keys.length} (the number of keys)`,
      );
    threshold = Number(rawThreshold);
  }
  return { keys, threshold };
}

/** An optional release sequence: an integer 0 … 2^53−1 (oapp-format's `sequence`). */
function sequenceOf(env: Env, name: string): number | undefined {
  const raw = (env[name] ?? '').trim();
  if (raw === '') return undefined;
  if (!/^[0-9]{1,16}$/.test(raw) || !Number.isSafeInteger(Number(raw)))
    invalid(name, 'must be a release sequence: an integer from 0 to 9007199254740991');
  return Number(raw);
}

/**
 * `AGENT_BOOTSTRAP_MINIMUM_SEQUENCE` and `AGENT_BOOTSTRAP_ALLOW_DOWNGRADE_TO` (ADR 0147): only with administrator
 * keys, and the downgrade not below the floor (it could never be accepted).
 */
function bootstrapRollback(
  env: Env,
  administrators: BootstrapAdministrators | undefined,
): { minimumSequence?: number; allowDowngradeTo?: number } {
  const minimumSequence = sequenceOf(env, 'AGENT_BOOTSTRAP_MINIMUM_SEQUENCE');
  const allowDowngradeTo = sequenceOf(env, 'AGENT_BOOTSTRAP_ALLOW_DOWNGRADE_TO');
  for (const [name, value] of [
    ['AGENT_BOOTSTRAP_MINIMUM_SEQUENCE', minimumSequence],
    ['AGENT_BOOTSTRAP_ALLOW_DOWNGRADE_TO', allowDowngradeTo],
  ] as const)
    if (value !== undefined && administrators === undefined)
      invalid(
        name,
        "is set without AGENT_BOOTSTRAP_ADMIN_KEYS or _FILE: only the administrators' signature makes a bootstrap's sequence known",
      );
  if (minimumSequence !== undefined && allowDowngradeTo !== undefined && allowDowngradeTo < minimumSequence)
    invalid(
      'AGENT_BOOTSTRAP_ALLOW_DOWNGRADE_TO',
      `(${allowDowngradeTo}) is below AGENT_BOOTSTRAP_MINIMUM_SEQUENCE (${minimumSequence}), so it could never be accepted`,
    );
  return {
    ...(minimumSequence === undefined ? {} : { minimumSequence }),
    ...(allowDowngradeTo === undefined ? {} : { allowDowngradeTo }),
  };
}

function bootstrapSignature(env: Env): string | undefined {
  const raw = (env['AGENT_BOOTSTRAP_SIGNATURE'] ?? '').trim();
  if (raw === '') return undefined;
  if (raw.includes('\u0000')) invalid('AGENT_BOOTSTRAP_SIGNATURE', 'must not contain NUL');
  return resolve(raw);
}

function tcpLimits(env: Env): TcpLimits {
  const d = DEFAULT_TCP_LIMITS;
  const tcp = {
    maxFrameBytes: positiveInt(env, 'AGENT_TCP_MAX_MESSAGE_BYTES', d.maxFrameBytes),
    maxQueuedBytes: positiveInt(env, 'AGENT_TCP_MAX_QUEUED_BYTES', d.maxQueuedBytes),
    maxConnections: positiveInt(env, 'AGENT_TCP_MAX_CONNECTIONS', d.maxConnections),
    idleMs: positiveInt(env, 'AGENT_TCP_IDLE_TIMEOUT_MS', d.idleMs),
    runsInFlight: positiveInt(env, 'AGENT_TCP_RUNS_IN_FLIGHT', d.runsInFlight),
  };
  if (tcp.maxQueuedBytes < tcp.maxFrameBytes)
    invalid('AGENT_TCP_MAX_QUEUED_BYTES', 'must be at least AGENT_TCP_MAX_MESSAGE_BYTES');
  return tcp;
}

function adminListen(env: Env): AdminListen | 'off' {
  const raw = (env['AGENT_ADMIN_PORT'] ?? '').trim();
  if (raw.toLowerCase() === 'off') return 'off';
  let port = DEFAULT_ADMIN_PORT;
  if (raw !== '') {
    if (!/^[0-9]{1,5}$/.test(raw) || Number(raw) > 65535)
      invalid('AGENT_ADMIN_PORT', 'must be a port (0-65535) or off');
    port = Number(raw);
  }
  const bind = (env['AGENT_ADMIN_BIND'] ?? '').trim();
  if (bind.includes('\u0000') || /\s/.test(bind)) invalid('AGENT_ADMIN_BIND', 'must be an address');
  return { port, bind: bind === '' ? DEFAULT_ADMIN_BIND : bind };
}

/**
 * Reads the environment and arguments once. Key variables are parsed here so a malformed value stops
 * start-up (S45, S114); nothing is decrypted here (S49).
 * `AGENT_BOOTSTRAP_ADMIN_KEYS_FILE` is read here too.
 * @throws {@link AgentError} `AGENT_BOOTSTRAP_MISSING`, `AGENT_CONFIG_INVALID`.
 */
export function loadConfig(env: Env, argv: readonly string[] = []): Config {
  const bootstrap = argv[0] ?? env['AGENT_BOOTSTRAP'];
  if (bootstrap === undefined || bootstrap.trim() === '') {
    throw new AgentError(
      'AGENT_BOOTSTRAP_MISSING',
      'no bootstrap: set AGENT_BOOTSTRAP or pass a file path, Base64 text or encrypted text as the first argument',
    );
  }
  const administrators = bootstrapAdministrators(env);
  const rollback = bootstrapRollback(env, administrators);
  return {
    bootstrap,
    bootstrapSecretKey: bootstrapKey(env),
    bootstrapAdministrators: administrators,
    bootstrapMinimumSequence: rollback.minimumSequence,
    bootstrapAllowDowngradeTo: rollback.allowDowngradeTo,
    bootstrapSignature: bootstrapSignature(env),
    stringSecretKeys: stringKeys(env),
    allowUnpackaged: flag(env, 'AGENT_ALLOW_UNPACKAGED'),
    allowPrivateNetworkHosts: idList(env, 'AGENT_ALLOW_PRIVATE_NETWORK_HOSTS'),
    limits: {
      maxPackageBytes: positiveInt(env, 'AGENT_MAX_PACKAGE_BYTES', DEFAULT_LIMITS.maxPackageBytes),
      rawBodyBytes: positiveInt(env, 'AGENT_MAX_BODY_BYTES', DEFAULT_LIMITS.rawBodyBytes),
      bodyFieldBytes: positiveInt(env, 'AGENT_MAX_BODY_FIELD_BYTES', DEFAULT_LIMITS.bodyFieldBytes),
      outboundResponseBytes: positiveInt(
        env,
        'AGENT_OUTBOUND_MAX_RESPONSE_BYTES',
        DEFAULT_LIMITS.outboundResponseBytes,
      ),
    },
    timeouts: {
      outboundMs: positiveInt(env, 'AGENT_OUTBOUND_TIMEOUT_MS', DEFAULT_TIMEOUTS.outboundMs),
      headersMs: positiveInt(env, 'AGENT_HEADERS_TIMEOUT_MS', DEFAULT_TIMEOUTS.headersMs),
      requestMs: positiveInt(env, 'AGENT_REQUEST_TIMEOUT_MS', DEFAULT_TIMEOUTS.requestMs),
      shutdownMs: positiveInt(env, 'AGENT_SHUTDOWN_TIMEOUT_MS', DEFAULT_TIMEOUTS.shutdownMs),
      scriptMs: boundedInt(env, 'AGENT_SCRIPT_TIME_MS', DEFAULT_TIMEOUTS.scriptMs, ENGINE_MAX_LIMITS.timeMs),
      splitMs: boundedInt(
        env,
        'AGENT_SPLIT_TIME_MS',
        DEFAULT_TIMEOUTS.splitMs,
        ENGINE_MAX_LIMITS.splitTimeMs,
      ),
    },
    logLevel: logLevel(env),
    dataDir: dataDir(env),
    tcp: tcpLimits(env),
    admin: adminListen(env),
    sandboxWorkers: boundedInt(env, 'AGENT_SANDBOX_WORKERS', MAX_POOLED_WORKERS, MAX_SANDBOX_WORKERS),
    sandboxIdleMs: zeroToMax(env, 'AGENT_SANDBOX_IDLE_MS', DEFAULT_SANDBOX_IDLE_MS, MAX_SANDBOX_IDLE_MS),
    optimizeForSize: flag(env, 'AGENT_OPTIMIZE_FOR_SIZE'),
    heapGrowthPercent: zeroToMax(
      env,
      'AGENT_HEAP_GROWTH_PERCENT',
      DEFAULT_HEAP_GROWTH_PERCENT,
      MAX_HEAP_GROWTH_PERCENT,
    ),
  };
}

/**
 * The V8 flags `config` asks for, set once at start before any sandbox worker exists (process-wide: the main thread
 * and every worker's heap read them at each collection).
 */
export function v8FlagsOf(config: Pick<Config, 'optimizeForSize' | 'heapGrowthPercent'>): string[] {
  const flags: string[] = [];
  if (config.optimizeForSize === true) flags.push('--optimize-for-size');
  if (config.heapGrowthPercent !== undefined && config.heapGrowthPercent > 0)
    flags.push(`--heap-growing-percent=${config.heapGrowthPercent}`);
  return flags;
}
