import { readFileSync } from 'node:fs';

/**
 * Exit codes of `main.js` (README "Exit codes"; the packager uses the same): 0 after a clean stop or `--help` /
 * `--version`, 1 when start-up fails (one fatal JSON line on stderr), 2 for an option it does not know.
 */
export const EXIT_START_FAILED = 1;
export const EXIT_USAGE = 2;

export const USAGE = `Usage: node dist/main.js [<bootstrap>] | --help | --version

Runs the deployments of a bootstrap: a file path, Base64 JSON, JSON or encrypted text, given as the argument
or in AGENT_BOOTSTRAP (the argument wins). Configuration comes from the environment (README "Configuration"),
among others AGENT_BOOTSTRAP_SECRETKEY, AGENT_BOOTSTRAP_ADMIN_KEYS (administrators who must have signed the
bootstrap), AGENT_BOOTSTRAP_MINIMUM_SEQUENCE and AGENT_BOOTSTRAP_ALLOW_DOWNGRADE_TO (the signed bootstrap's floor
and a deliberate downgrade; an older one than the newest accepted is refused), AGENT_STRING_SECRETKEYS, AGENT_DATA_DIR (off: no data directory), LOG_LEVEL (error|warn|info|debug,
default info), AGENT_ADMIN_PORT (default 39576, off disables the admin listener) and AGENT_ADMIN_BIND (default
127.0.0.1). The admin listener serves GET /health, /ready and /metrics.
Exit codes: 0 stopped cleanly (SIGTERM/SIGINT) or --help/--version; 1 start-up failed (one JSON line on
stderr: {"ts","level":"fatal","code","msg"}); 2 unknown option.
`;

/** What the arguments ask for: run (with the bootstrap argument, if any), print and exit 0, or exit 2. */
export type ArgsAction =
  | { readonly kind: 'run'; readonly args: readonly string[] }
  | { readonly kind: 'print'; readonly text: string }
  | { readonly kind: 'usage-error' };

/** `--help`/`-h`, `--version`/`-v`; any other argument starting with `-` is refused (never echoed). */
export function parseArgs(argv: readonly string[], version: string): ArgsAction {
  const [first] = argv;
  if (first === '--help' || first === '-h') return { kind: 'print', text: USAGE };
  if (first === '--version' || first === '-v') return { kind: 'print', text: `${version}\n` };
  if (first !== undefined && first.startsWith('-')) return { kind: 'usage-error' };
  return { kind: 'run', args: argv };
}

/** The version in the app's package.json (beside `dist/`), or `unknown` when it cannot be read. */
export function appVersion(mainUrl: string): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', mainUrl), 'utf8')) as {
      version?: unknown;
    };
    return typeof pkg.version === 'string' ? pkg.version : 'unknown';
  } catch {
    return 'unknown';
  }
}

/**
 * Whether a boolean variable's value is off: unset, empty or `false` (`true` is on; anything else is a configuration
 * error, reported by the configuration). Here, with the arguments, so the entry point reads it without loading the
 * configuration's modules.
 */
export function flagIsOff(raw: string | undefined): boolean {
  return raw === undefined || raw === '' || raw === 'false';
}
