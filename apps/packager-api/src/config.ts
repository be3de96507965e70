import { existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { isIP } from 'node:net';
import { resolve } from 'node:path';
import { MAX_STRING_PLAINTEXT_BYTES } from '@org/envelope-crypto';
import {
  DEFAULT_LIMITS,
  isRequestError,
  parseTokenHashes,
  type Limits,
  type TokenRecord,
} from '@org/packager';
import { LOG_LEVELS, type Logger, type LogLevel } from './logger.js';

/** Request size limits, in bytes (README "Limits"): @org/packager's, with its defaults. */
export type { Limits } from '@org/packager';
export { DEFAULT_LIMITS } from '@org/packager';

/** Server timeouts, in milliseconds. */
export interface Timeouts {
  headersMs: number;
  requestMs: number;
  keepAliveMs: number;
  shutdownMs: number;
}

/** The validated configuration. */
export interface Config {
  port: number;
  bindAddress: string;
  /** `PACKAGER_RESOURCE_DIRS` when set (first = the community dir, must exist), else undefined (defaults). */
  resourceDirs: string[] | undefined;
  limits: Limits;
  timeouts: Timeouts;
  /** `LOG_LEVEL`: `debug`, `info` (default), `warn` or `error`. */
  logLevel: LogLevel;
  /** `PACKAGER_WORKERS`: server processes behind node:cluster (1, the default: no cluster, one process). */
  workers: number;
  /**
   * Caller tokens from `PACKAGER_TOKEN_HASHES` or `PACKAGER_TOKENS_FILE` (ADR 0140): hash records only. Empty: every
   * operation is open, which is refused on an address other than loopback unless `allowUnauthenticated`.
   */
  tokens: readonly TokenRecord[];
  /** `PACKAGER_ALLOW_UNAUTHENTICATED=1`: serve without tokens on an address other than loopback. */
  allowUnauthenticated: boolean;
}

/** A configuration the service refuses to start with. Its message is printed; no stack trace. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

export const DEFAULT_PORT = 39575;
export const DEFAULT_BIND_ADDRESS = '127.0.0.1';
export const DEFAULT_RESOURCE_DIRS = ['/community-resources', '/local-resources1', '/local-resources2'];
/** Used when `/community-resources` is missing and `PACKAGER_RESOURCE_DIRS` is not set. */
export const FALLBACK_RESOURCE_DIR = 'resources';

const KIB = 1024;
const MIB = 1024 * KIB;

export const DEFAULT_TIMEOUTS: Timeouts = {
  headersMs: 10_000,
  requestMs: 60_000,
  keepAliveMs: 5_000,
  shutdownMs: 10_000,
};

type Env = Readonly<Record<string, string | undefined>>;

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^[0-9]+$/.test(raw))
    throw new ConfigError(`${name} must be a whole number, got "${raw.slice(0, 32)}"`);
  const n = Number(raw);
  if (n < min || n > max) throw new ConfigError(`${name} must be from ${min} to ${max}, got ${n}`);
  return n;
}

function limitsFrom(env: Env): Limits {
  const d = DEFAULT_LIMITS;
  const max = 1024 * MIB;
  return {
    bodyFieldBytes: integer(env, 'PACKAGER_BODY_FIELD_BYTES', d.bodyFieldBytes, 1, 16 * MIB),
    workflowBytes: integer(env, 'PACKAGER_WORKFLOW_BYTES', d.workflowBytes, 1, 64 * MIB),
    bootstrapBytes: integer(env, 'PACKAGER_BOOTSTRAP_BYTES', d.bootstrapBytes, 1, 4 * MIB),
    stringBytes: integer(env, 'PACKAGER_STRING_BYTES', d.stringBytes, 0, MAX_STRING_PLAINTEXT_BYTES),
    packageBytes: integer(env, 'PACKAGER_PACKAGE_BYTES', d.packageBytes, 1, max),
  };
}

function timeoutsFrom(env: Env): Timeouts {
  const d = DEFAULT_TIMEOUTS;
  const hour = 3_600_000;
  return {
    headersMs: integer(env, 'PACKAGER_HEADERS_TIMEOUT_MS', d.headersMs, 1, hour),
    requestMs: integer(env, 'PACKAGER_REQUEST_TIMEOUT_MS', d.requestMs, 1, hour),
    keepAliveMs: integer(env, 'PACKAGER_KEEP_ALIVE_TIMEOUT_MS', d.keepAliveMs, 1, hour),
    shutdownMs: integer(env, 'PACKAGER_SHUTDOWN_TIMEOUT_MS', d.shutdownMs, 0, hour),
  };
}

function logLevelFrom(env: Env): LogLevel {
  const raw = (env['LOG_LEVEL'] ?? '').trim().toLowerCase();
  if (raw === '') return 'info';
  const level = LOG_LEVELS.find((l) => l === raw);
  if (level === undefined) throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);
  return level;
}

function resourceDirsFrom(env: Env): string[] | undefined {
  const raw = env['PACKAGER_RESOURCE_DIRS'];
  if (raw === undefined || raw.trim() === '') return undefined;
  return raw
    .split(',')
    .map((d) => d.trim())
    .filter((d) => d !== '');
}

function flag(env: Env, name: string): boolean {
  const raw = (env[name] ?? '').trim().toLowerCase();
  if (raw === '' || raw === '0' || raw === 'false') return false;
  if (raw === '1' || raw === 'true') return true;
  throw new ConfigError(`${name} must be 1 or 0`);
}

/**
 * The caller token records of `PACKAGER_TOKEN_HASHES` (records separated by `;` or new lines) or of the file
 * `PACKAGER_TOKENS_FILE` names. A refusal names the variable or file and the line, never its text (S175).
 */
function tokensFrom(env: Env): TokenRecord[] {
  const inline = env['PACKAGER_TOKEN_HASHES'];
  const file = env['PACKAGER_TOKENS_FILE'];
  const hasInline = inline !== undefined && inline.trim() !== '';
  const hasFile = file !== undefined && file.trim() !== '';
  if (hasInline && hasFile)
    throw new ConfigError('set one of PACKAGER_TOKEN_HASHES and PACKAGER_TOKENS_FILE, not both');
  let text: string;
  let source: string;
  if (hasFile) {
    source = `PACKAGER_TOKENS_FILE ${file}`;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      throw new ConfigError(
        `PACKAGER_TOKENS_FILE ${file} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
      );
    }
  } else if (hasInline) {
    source = 'PACKAGER_TOKEN_HASHES';
    text = inline;
  } else return [];
  try {
    const records = parseTokenHashes(text, source);
    if (records.length === 0) throw new ConfigError(`${source} holds no token record`);
    return records;
  } catch (err) {
    if (isRequestError(err)) throw new ConfigError(err.message);
    throw err;
  }
}

/** True for an address only this machine reaches: `localhost`, 127.0.0.0/8, `::1`. */
export function isLoopback(address: string): boolean {
  const a = address.trim().toLowerCase();
  if (a === 'localhost' || a === '::1' || a === '[::1]') return true;
  if (isIP(a) === 4) return a.startsWith('127.');
  return a === '::ffff:127.0.0.1';
}

/**
 * Reads the environment once (README "Configuration").
 * @throws ConfigError naming the variable.
 */
export function loadConfig(env: Env): Config {
  const config: Config = {
    port: integer(env, 'PORT', DEFAULT_PORT, 0, 65535),
    bindAddress: env['PACKAGER_BIND_ADDRESS'] || DEFAULT_BIND_ADDRESS,
    resourceDirs: resourceDirsFrom(env),
    limits: limitsFrom(env),
    timeouts: timeoutsFrom(env),
    logLevel: logLevelFrom(env),
    workers: integer(env, 'PACKAGER_WORKERS', 1, 1, 64),
    tokens: tokensFrom(env),
    allowUnauthenticated: flag(env, 'PACKAGER_ALLOW_UNAUTHENTICATED'),
  };
  if (config.tokens.length === 0 && !config.allowUnauthenticated && !isLoopback(config.bindAddress)) {
    throw new ConfigError(
      `PACKAGER_BIND_ADDRESS ${config.bindAddress} is not loopback and no caller tokens are configured: set PACKAGER_TOKEN_HASHES or PACKAGER_TOKENS_FILE, or PACKAGER_ALLOW_UNAUTHENTICATED=1 to serve every caller`,
    );
  }
  if (config.timeouts.headersMs > config.timeouts.requestMs) {
    throw new ConfigError('PACKAGER_HEADERS_TIMEOUT_MS must not exceed PACKAGER_REQUEST_TIMEOUT_MS');
  }
  return config;
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/**
 * The resource directories to search, in order. The first (community) directory must exist; missing optional
 * ones are skipped with a log line. Without `PACKAGER_RESOURCE_DIRS` and without `/community-resources`
 * (a machine that is not the container), `./resources` under the working directory is used and created.
 * @throws ConfigError when an explicitly configured community directory is missing.
 */
export function prepareResourceDirs(config: Config, log: Logger, cwd: string): string[] {
  let dirs = config.resourceDirs;
  if (dirs === undefined) {
    dirs = [...DEFAULT_RESOURCE_DIRS];
    if (!isDirectory(DEFAULT_RESOURCE_DIRS[0] as string)) {
      const fallback = resolve(cwd, FALLBACK_RESOURCE_DIR);
      if (!existsSync(fallback)) mkdirSync(fallback, { recursive: true });
      log.warn('community resource directory missing; using the local fallback', {
        missing: DEFAULT_RESOURCE_DIRS[0],
        dir: fallback,
      });
      dirs[0] = fallback;
    }
  }
  const [community, ...optional] = dirs;
  if (community === undefined || !isDirectory(community)) {
    throw new ConfigError(`the community resource directory ${community ?? '(none)'} does not exist`);
  }
  const found = [community];
  for (const dir of optional) {
    if (isDirectory(dir)) found.push(dir);
    else log.info('optional resource directory missing; skipped', { dir });
  }
  return found;
}
