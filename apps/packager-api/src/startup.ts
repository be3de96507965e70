import { readFileSync } from 'node:fs';

/**
 * Exit codes of `main.js` (README "Exit codes"; the agent uses the same): 0 after a clean stop or `--help` /
 * `--version`, 1 when start-up fails, 2 for an argument it does not know.
 */
export const EXIT_START_FAILED = 1;
export const EXIT_USAGE = 2;

/**
 * The one start-up failure line of both services: one JSON object on stderr,
 * `{"ts","level":"fatal","code","msg"}` (plus `problems` when there are several). Never a stack trace.
 */
export function startupFailureLine(code: string, msg: string, now: Date = new Date()): string {
  return JSON.stringify({ ts: now.toISOString(), level: 'fatal', code, msg }) + '\n';
}

/**
 * The version in the app's package.json, or `unknown` when it cannot be read. `moduleUrl` is the
 * `import.meta.url` of a module in `src/` or `dist/` (package.json is beside both folders).
 */
export function appVersion(moduleUrl: string): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', moduleUrl), 'utf8')) as {
      version?: unknown;
    };
    return typeof pkg.version === 'string' ? pkg.version : 'unknown';
  } catch {
    return 'unknown';
  }
}

export const USAGE = `Usage: node dist/main.js [--help | --version]

The oapp packager HTTP service. Configuration comes from the environment (README "Configuration"):
  PORT (default 39575), PACKAGER_BIND_ADDRESS (default 127.0.0.1), PACKAGER_RESOURCE_DIRS,
  PACKAGER_*_BYTES limits, PACKAGER_*_TIMEOUT_MS timeouts, LOG_LEVEL (error|warn|info|debug, default info),
  PACKAGER_TOKEN_HASHES or PACKAGER_TOKENS_FILE (caller token hash records), PACKAGER_ALLOW_UNAUTHENTICATED=1
  (serve without tokens on an address other than loopback).
Endpoints: the API, GET /health, GET /ready, GET /metrics, GET /openapi.json.
Exit codes: 0 stopped cleanly (SIGTERM/SIGINT) or --help/--version; 1 start-up failed (one JSON line on
stderr: {"ts","level":"fatal","code","msg"}); 2 unknown argument.
`;

/** What the arguments ask for: run the service, print and exit 0, or refuse with exit 2. */
export type ArgsAction =
  | { readonly kind: 'run' }
  | { readonly kind: 'print'; readonly text: string }
  | { readonly kind: 'usage-error'; readonly arg: string };

/** `--help` / `-h` and `--version` / `-v`; the service takes no other argument. */
export function parseArgs(argv: readonly string[], version: string): ArgsAction {
  const [first] = argv;
  if (first === undefined) return { kind: 'run' };
  if (first === '--help' || first === '-h') return { kind: 'print', text: USAGE };
  if (first === '--version' || first === '-v') return { kind: 'print', text: `${version}\n` };
  return { kind: 'usage-error', arg: first };
}
