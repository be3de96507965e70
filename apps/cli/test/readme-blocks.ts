import { spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { shellBlocks, type ShellBlock } from '../../../scripts/pack-install/readme-blocks.mjs';

// Runs the READMEs' shell blocks as a reader would, in bash, on this installed and built tree (used by
// readme-shell-blocks.test.ts and examples.test.ts).

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/** A README shell block and its key: `<file>: <first line without its comment>` (` #2` for a repeated one). */
export type Block = ShellBlock & { readonly file: string; readonly key: string };

/** Every ```sh/```bash block of every README of the repository. */
export function readmeBlocks(): Block[] {
  const seen = new Map<string, number>();
  return shellBlocks(ROOT).map((b) => {
    const key = `${b.file}: ${withoutComment(b.body.split('\n')[0] ?? '')}`;
    const n = (seen.get(key) ?? 0) + 1;
    seen.set(key, n);
    // A second block of one README that starts with the same line: `… #2`.
    return { ...b, key: n === 1 ? key : `${key} #${n}` };
  });
}

/** A shell line without its trailing `# comment`. */
export function withoutComment(line: string): string {
  return line.replace(/\s+#\s.*$/, '').trimEnd();
}

/** The examples' "Run the tests" blocks: only `pnpm exec oapp test examples/<name>/testrunner.config.json` lines. */
export function isExampleTestBlock(b: Block): boolean {
  const lines = b.body.split('\n').filter((l) => l.trim() !== '');
  return (
    b.file.startsWith('examples/') &&
    lines.length > 0 &&
    lines.every((l) => /^pnpm exec oapp test examples\/[\w-]+\/testrunner\.config\.json$/.test(l))
  );
}

const WORKSPACE_NAMES = [
  ...['packages', 'apps', 'tools'].flatMap((d) =>
    readdirSync(join(ROOT, d), { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .flatMap((e) => {
        try {
          return [
            (JSON.parse(readFileSync(join(ROOT, d, e.name, 'package.json'), 'utf8')) as { name: string })
              .name,
          ];
        } catch {
          return [];
        }
      }),
  ),
];

/**
 * A `pnpm` for the blocks: `pnpm install …` and `pnpm … build` are checked (every `--filter` names a workspace
 * package) and recorded, not run, because the tests run on a tree that is already installed and built (rebuilding
 * here would replace dist/ under the tests running beside these); everything else (`pnpm exec oapp …`) is the real
 * pnpm.
 */
function pnpmShim(dir: string): void {
  const real = spawnSync('bash', ['-c', 'command -v pnpm'], { encoding: 'utf8' }).stdout.trim();
  if (real === '') throw new Error('pnpm is not on PATH');
  const script = `#!/usr/bin/env bash
set -euo pipefail
args=("$@") i=0 cmd=
while [ "$i" -lt "\${#args[@]}" ]; do
  a=\${args[$i]}
  case "$a" in
    --filter|-F|--filter-prod)
      name=\${args[$((i + 1))]%...}
      case " ${WORKSPACE_NAMES.join(' ')} " in *" $name "*) ;; *) echo "pnpm shim: no workspace package $name" >&2; exit 1 ;; esac
      i=$((i + 2)) ;;
    -*) i=$((i + 1)) ;;
    *) cmd=$a; break ;;
  esac
done
case "$cmd" in
  install|i|build) echo "pnpm $*" >>"${join(dir, 'skipped.log')}"; exit 0 ;;
esac
exec ${JSON.stringify(real)} "$@"
`;
  writeFileSync(join(dir, 'pnpm'), script);
  chmodSync(join(dir, 'pnpm'), 0o755);
}

/** What a scenario printed. */
export interface Outcome {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** The `pnpm install`/`build` commands the shim recorded instead of running. */
  skipped: string[];
}

/** Options of {@link runBlocks}. */
export interface RunBlocksOptions {
  /** Working directory (default: the repository root). */
  cwd?: string;
  /** Extra environment variables. */
  env?: Record<string, string>;
  /** Stop the run (SIGTERM to its process group) once the output after the last block's start matches this. */
  until?: RegExp;
  timeoutMs: number;
}

/** The marker echoed before each block (so `until` looks at the last block's output only). */
const MARK = '::readme-block::';

/**
 * Runs `bodies` one after the other in one `bash` (`set -euo pipefail`: a failed command fails the run, which a
 * reader typing them would also see), with a `pnpm` shim first on PATH and PATH otherwise without any
 * node_modules/.bin (vitest's), so that a block gets `oapp` only the way it says. Every process it starts is in one
 * process group, which is killed when the run ends, stops or times out.
 */
export function runBlocks(bodies: readonly string[], options: RunBlocksOptions): Promise<Outcome> {
  const work = mkdtempSync(join(tmpdir(), 'oapp-readme-'));
  const bin = join(work, 'bin');
  const tmp = join(work, 'tmp');
  mkdirSync(bin);
  mkdirSync(tmp);
  pnpmShim(bin);
  const path = (process.env['PATH'] ?? '')
    .split(delimiter)
    .filter((p) => !p.split(sep).includes('node_modules'))
    .join(delimiter);
  const script = ['set -euo pipefail', ...bodies.flatMap((b) => [`echo '${MARK}'`, b])].join('\n');
  writeFileSync(join(work, 'blocks.sh'), `${script}\n`);
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [join(work, 'blocks.sh')], {
      cwd: options.cwd ?? ROOT,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      // AGENT_ADMIN_PORT=0: an agent's admin listener takes a free port, not 39576, which a parallel run may hold.
      env: {
        PATH: `${bin}${delimiter}${path}`,
        HOME: process.env['HOME'] ?? work,
        TMPDIR: tmp,
        AGENT_ADMIN_PORT: '0',
        ...options.env,
      },
    });
    let stdout = '';
    let stderr = '';
    const killGroup = (signal: NodeJS.Signals) => {
      try {
        process.kill(-child.pid!, signal);
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(() => killGroup('SIGKILL'), options.timeoutMs);
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      const started = stdout.split(MARK).length - 1;
      if (started === bodies.length && options.until?.test(stdout.slice(stdout.lastIndexOf(MARK)))) {
        killGroup('SIGTERM');
      }
    });
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      killGroup('SIGKILL'); // background jobs a failed block left behind
      let skipped: string[] = [];
      try {
        skipped = readFileSync(join(bin, 'skipped.log'), 'utf8').trimEnd().split('\n');
      } catch {
        // nothing skipped
      }
      rmSync(work, { recursive: true, force: true }); // the blocks' temporary directories (TMPDIR) included
      resolve({ code, signal, stdout: stdout.replaceAll(`${MARK}\n`, ''), stderr, skipped });
    });
  });
}

/**
 * A directory that looks like the repository (every top-level entry a symbolic link to the real one) except for
 * the files in `replaced`, written with the given text: for a block that reads a repository file whose port must
 * change.
 */
export function repositoryView(replaced: Record<string, string>): string {
  const view = mkdtempSync(join(tmpdir(), 'oapp-readme-view-'));
  const link = (rel: string) => {
    for (const e of readdirSync(join(ROOT, rel))) {
      const r = rel === '' ? e : join(rel, e);
      const inside = Object.keys(replaced).some((p) => p === r || p.startsWith(`${r}/`));
      if (!inside) symlinkSync(join(ROOT, r), join(view, r));
      else if (replaced[r] !== undefined) writeFileSync(join(view, r), replaced[r]);
      else {
        mkdirSync(join(view, r));
        link(r);
      }
    }
  };
  link('');
  return view;
}
