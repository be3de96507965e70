import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { resolve } from 'node:path';
import {
  FORBIDDEN_BOOTSTRAP_VARIABLES,
  MAX_SECRETS_FILE_BYTES,
  VARIABLE_NAME_PATTERN,
  parseSecretsFile,
} from '@org/workflow-compiler';
import { AgentError, isCodedError } from '@org/workflow-runtime';
import { withContext } from '@org/workflow-runtime/internal';

/** Values for the bootstrap's `${NAME}` references (ADR 0059). */
export interface BootstrapVariables {
  /** Every value by name: the environment, overridden by the secrets file. */
  readonly values: ReadonlyMap<string, string>;
  /** Names whose value came from `AGENT_SECRETS_FROM`: registered with the redactor when the bootstrap uses them. */
  readonly secretNames: ReadonlySet<string>;
}

/** One `AGENT_SECRETS_FROM` source this agent reads. */
export interface SecretsSource {
  readonly kind: 'file' | 'device';
  readonly path: string;
}

/**
 * Variables a bootstrap may never reference, even when set: the agent's own key material, which must stay out
 * of workflow-visible data (S51). One list with the test runner's (`FORBIDDEN_BOOTSTRAP_VARIABLES`).
 */
export const FORBIDDEN_VARIABLES: ReadonlySet<string> = FORBIDDEN_BOOTSTRAP_VARIABLES;

/** Schemes the reference accepts that this agent refuses: nothing is fetched over the network at start-up. */
const REFUSED_SCHEMES = new Set(['http', 'https', 'hostrecord']);

function unsupported(scheme: string, position: number): never {
  const why = REFUSED_SCHEMES.has(scheme)
    ? 'this agent reads secrets only from local files (file:/path, device:/path or a bare path), never over the network'
    : 'unknown scheme; use file:/path, device:/path or a bare path';
  throw new AgentError(
    'AGENT_SECRETS_SOURCE_UNSUPPORTED',
    `AGENT_SECRETS_FROM source ${position}: scheme "${scheme.slice(0, 32)}:" is not supported: ${why}`,
  );
}

/**
 * Parses `AGENT_SECRETS_FROM`: sources separated by `;` (blank entries ignored), each `file:<path>`,
 * `device:<path>` or a bare path. A scheme is two or more letters, digits, `+`, `-`, `.` before the first `:`
 * (so `C:\x` is a path); `http:`, `https:`, `hostrecord:` and unknown schemes are refused.
 * @throws {@link AgentError} `AGENT_SECRETS_SOURCE_UNSUPPORTED`.
 */
export function parseSecretsSources(raw: string | undefined): SecretsSource[] {
  const out: SecretsSource[] = [];
  const entries = (raw ?? '').split(';');
  for (const [i, entry] of entries.entries()) {
    const text = entry.trim();
    if (text === '') continue;
    const m = /^([A-Za-z][A-Za-z0-9+.-]+):/.exec(text);
    if (m === null) {
      out.push({ kind: 'file', path: text });
      continue;
    }
    const scheme = m[1]!.toLowerCase();
    const path = text.slice(m[0].length);
    if (scheme !== 'file' && scheme !== 'device') unsupported(scheme, i + 1);
    if (path === '') {
      throw new AgentError(
        'AGENT_SECRETS_UNREADABLE',
        `AGENT_SECRETS_FROM source ${i + 1}: no path after "${scheme}:"`,
      );
    }
    out.push({ kind: scheme, path });
  }
  return out;
}

/**
 * Reads at most `max + 1` bytes whatever `stat` says: a device or FIFO reports size 0, so the cap is enforced
 * on what is read.
 */
function readCapped(path: string, max: number): Uint8Array {
  const fd = openSync(path, 'r');
  try {
    if (fstatSync(fd).isDirectory()) throw new Error('a directory');
    const buf = Buffer.alloc(max + 1);
    let n = 0;
    for (;;) {
      const got = readSync(fd, buf, n, buf.length - n, null);
      if (got === 0) break;
      n += got;
      if (n > max) break;
    }
    return buf.subarray(0, n);
  } finally {
    closeSync(fd);
  }
}

function readSource(source: SecretsSource, position: number, baseDir: string): Map<string, string> {
  const where = `AGENT_SECRETS_FROM source ${position} (${source.kind})`;
  let bytes: Uint8Array;
  try {
    bytes = readCapped(resolve(baseDir, source.path), MAX_SECRETS_FILE_BYTES);
  } catch {
    throw new AgentError('AGENT_SECRETS_UNREADABLE', `${where}: the file cannot be read`);
  }
  try {
    return parseSecretsFile(bytes);
  } catch (err) {
    // The parser's messages name lines and names, never values.
    if (isCodedError(err)) throw withContext(err, where);
    throw err;
  }
}

/**
 * The values for `${NAME}` (ADR 0059): every environment variable whose name fits the grammar, then each
 * `AGENT_SECRETS_FROM` source in order, a later one overriding. Read once, at start.
 * @throws {@link AgentError} `AGENT_SECRETS_SOURCE_UNSUPPORTED`, `AGENT_SECRETS_UNREADABLE`; `WorkflowError`
 *   `WORKFLOW_SECRETS_FILE_INVALID` (with the source in front).
 */
export function loadBootstrapVariables(
  env: Readonly<Record<string, string | undefined>>,
  baseDir: string = process.cwd(),
): BootstrapVariables {
  const sources = parseSecretsSources(env['AGENT_SECRETS_FROM']);
  const values = new Map<string, string>();
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && VARIABLE_NAME_PATTERN.test(name)) values.set(name, value);
  }
  const secretNames = new Set<string>();
  sources.forEach((source, i) => {
    for (const [name, value] of readSource(source, i + 1, baseDir)) {
      values.set(name, value);
      secretNames.add(name);
    }
  });
  return { values, secretNames };
}
