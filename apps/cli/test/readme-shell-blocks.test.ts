import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shellBlocksOf } from '../../../scripts/pack-install/readme-blocks.mjs';
import { createProgram } from '../src/cli.js';
import { processContext } from '../src/context.js';
import { freePort, listening, PACKAGER_MAIN, spawnMain, tempDir, type Child } from './helpers.js';
import {
  isExampleTestBlock,
  readmeBlocks,
  repositoryView,
  ROOT,
  runBlocks,
  withoutComment,
} from './readme-blocks.js';

// Issue 27 §2: every ```sh/```bash block of every README runs as written in a fresh clone, or the line before it
// says what it needs first ("Needs first: …", scripts/pack-install/readme-blocks.mjs). Here each block is either
// run (SCENARIOS below, or test/examples.test.ts for the examples' `pnpm exec oapp test` blocks), or listed in
// NOT_RUN with the reason; every block's `oapp` command lines are also checked against the program's own commands
// and options. Runs use the installed and built tree: `pnpm install`/`build` lines are checked and skipped (see
// readme-blocks.ts), ports are replaced by free ones, everything stays on loopback.

const BLOCKS = readmeBlocks();
const byKey = new Map(BLOCKS.map((b) => [b.key, b]));

/** Blocks this test does not run, and why. Keys: `<README>: <first line>` (readme-blocks.ts). */
const NOT_RUN: Record<string, string> = {
  'README.md: pnpm install --frozen-lockfile && pnpm -s build':
    'packs every public package (about 30 s) and installs them from the npm registry: scripts/pack-install-check.sh runs pack:release and one npm install of every tarball (test/e2e/pack-install.e2e.test.ts)',
  'README.md: bash scripts/test.sh': 'the whole test suite: minutes; CI runs exactly this command',
  'README.md: bash scripts/start-packager.sh':
    'a server that runs until stopped, after an install and a build; the "Run a package" scenario starts the same dist/main.js',
  'README.md: docker build -f Dockerfile.packager -t oapp-packager .':
    'containers (10 minutes, a container runtime): scripts/container-smoke.sh runs the four blocks by hand',
  'README.md: mkdir -p resources && chmod a+rx resources': 'containers: scripts/container-smoke.sh',
  'README.md: mkdir -p config && cp hello-app.oapp config/ && chmod -R a+rX config':
    'containers: scripts/container-smoke.sh',
  'README.md: docker stop -t 10 oapp-agent oapp-packager': 'containers: scripts/container-smoke.sh',
  'README.md: pnpm install --frozen-lockfile #2':
    'starts the packager on the agent on the fixed port 39575 of the built bootstrap, which a running packager may hold: apps/packager-app/test/agent.test.ts starts the same bootstrap on a free port and calls /health and /workflow-hash',
  'README.md: mkdir -p resources && chmod a+rx resources #2': 'containers: scripts/container-smoke.sh',
  'README.md: docker stop -t 10 oapp-packager-agent': 'containers: scripts/container-smoke.sh',
  'apps/cli/README.md: npm install /tmp/oapp-release/*.tgz':
    'the npm registry for third-party dependencies: scripts/pack-install-check.sh installs the tarball set this way',
  'apps/cli/README.md: oapp keygen --purpose sign -o author.key':
    'command reference (needs first: files and keys it names); its command lines are checked below',
  'apps/cli/README.md: oapp package workflow.json -o hello-app.oapp --package-id hello-app \\':
    'command reference',
  'apps/cli/README.md: oapp package --raw large.bin -o large.oapp --package-id data-1 --packager-key packager.key --recipient site.pub':
    'command reference',
  'apps/cli/README.md: oapp package workflow.json -o hello-app.oapp --package-id hello-app --packager-key packager.key \\':
    'command reference; test/release.test.ts runs these options',
  'apps/cli/README.md: oapp inspect hello-app.oapp': 'command reference',
  'apps/cli/README.md: oapp sign-bootstrap bootstrap.json --sign-key admin.key --sequence 3':
    'command reference; test/bootstrap-signature.test.ts runs these commands',
  'apps/cli/README.md: oapp verify --bootstrap bootstrap.json --deployment hello-1': 'command reference',
  'apps/cli/README.md: oapp open --bootstrap bootstrap.json -o workflow.json': 'command reference',
  'apps/cli/README.md: oapp envelope hello-app.oapp -o hello-endorsed.oapp --bootstrap receiver.json \\':
    'command reference',
  'apps/cli/README.md: printf %s "$CLIENT_SECRET" | oapp encrypt-string --packager-key packager.key --recipient agent.pub':
    'command reference',
  'apps/cli/README.md: oapp compile workflow.json -o compiled.json --resource-dir ./resources':
    'command reference',
  'apps/cli/README.md: oapp test examples/timer-metrics/testrunner.config.json':
    'command reference; test/examples.test.ts runs every example through `pnpm exec oapp test`',
  'apps/cli/README.md: oapp version': 'writes completion scripts into the shell configuration of the reader',
  'apps/cli/README.md: pnpm -s build && pnpm --filter @org/cli bench':
    'a benchmark: minutes, a 1 GiB file, age and minisign',
  'apps/packager-api/README.md: B=http://127.0.0.1:39575':
    'needs the packager running (its README says so; apps/packager-api is not edited here); test/e2e.test.ts covers these endpoints',
  'deploy/kubernetes/README.md: jq \'.[0].remoteConfiguration = "/config/packages/app.oapp" | .[0].allowHttpServerAccess[0].bindAddress = "0.0.0.0"\' \\':
    'a Kubernetes cluster (kubectl); tools/deploy-manifests checks the manifests',
  'packages/envelope-crypto/README.md: pnpm add @org/envelope-crypto':
    "installs into the reader's project from the npm registry, where nothing is published yet (the root README's release tarballs work today)",
  'packages/envelope-crypto/README.md: pnpm --filter @org/envelope-crypto build': 'ends in a benchmark',
  'packages/envelope-crypto/testdata/README.md: git clone https://github.com/C2SP/CCTV /tmp/CCTV':
    'network (GitHub) and it rewrites a tracked vector file',
  'packages/envelope-crypto/testdata/README.md: pnpm --filter @org/envelope-crypto exec tsx testdata/generate.ts':
    'rewrites tracked test vectors; scripts/test.sh regenerates and diffs every set',
  'packages/host-policy/README.md: pnpm add @org/host-policy':
    "registry install into the reader's project (see envelope-crypto)",
  'packages/multipart-limits/README.md: pnpm add @org/multipart-limits':
    "registry install into the reader's project (see envelope-crypto)",
  'packages/oapp-format/README.md: pnpm add @org/oapp-format @org/envelope-crypto':
    "registry install into the reader's project (see envelope-crypto)",
  'packages/oapp-format/testdata/README.md: pnpm --filter @org/oapp-format generate':
    'rewrites tracked test vectors; scripts/test.sh regenerates and diffs every set',
  'packages/workflow-compiler/README.md: pnpm add @org/workflow-compiler':
    "registry install into the reader's project (see envelope-crypto)",
  'packages/workflow-compiler/testdata/README.md: cd packages/workflow-compiler && pnpm exec tsx testdata/generate.ts && git diff --exit-code testdata':
    'rewrites tracked test vectors; scripts/test.sh regenerates and diffs every set',
  'packages/workflow-test-runner/README.md: pnpm add @org/workflow-test-runner':
    "registry install into the reader's project (see envelope-crypto)",
};

/** Blocks run in one shell, in order, with what their output must show. */
interface Scenario {
  readonly name: string;
  readonly blocks: readonly string[];
  /** Free ports for the fixed ones the blocks name (on loopback). */
  readonly ports: readonly number[];
  readonly expect: readonly RegExp[];
  /** A reason for the timeout: agents and packagers start in 1–3 s each on this shared 2-core machine, and a
   * scenario that takes 35–45 s under load (the root README walkthrough runs about 30 commands) gets room. */
  readonly timeoutMs: number;
}

const SCENARIOS: Scenario[] = [
  {
    name: 'root README: the oapp command line, then the agent README "Run" block on its files',
    blocks: [
      'README.md: pnpm install --frozen-lockfile',
      'apps/agent-runtime/README.md: (cd "$R" && pnpm --filter @org/agent-runtime... build)',
    ],
    ports: [8080],
    expect: [
      /^Usage: oapp /m,
      /^verified: package "hello-app"$/m,
      /\{"greeting" : "hello world"\}/,
      /"msg":"listening","bootstrap":"file"/,
    ],
    timeoutMs: 120_000,
  },
  {
    name: 'root README: Run a package (against the built packager)',
    blocks: [
      'README.md: R=$PWD && cd "$(mktemp -d)"',
      'README.md: (cd "$R" && pnpm --filter @org/agent-runtime... build)',
    ],
    ports: [39575, 8080],
    expect: [/\{"greeting" : "hello world"\}/],
    timeoutMs: 120_000,
  },
  {
    name: 'root README: Run the packager on the agent, the built packager.oapp checked against its hash and keys',
    blocks: ['README.md: K=apps/packager-app/dist/keys'],
    ports: [],
    expect: [/^verified: package "packager"$/m, /^hash ok: [0-9a-f]{64}$/m],
    timeoutMs: 60_000,
  },
  {
    name: 'cli README: from the repository root',
    blocks: ['apps/cli/README.md: pnpm install --frozen-lockfile'],
    ports: [],
    expect: [/^Usage: oapp /m],
    timeoutMs: 60_000,
  },
  {
    name: 'http-upload-api README: Deploy it',
    blocks: [
      'examples/http-upload-api/README.md: export PATH="$PWD/node_modules/.bin:$PATH" && R=$PWD && cd "$(mktemp -d)"',
    ],
    ports: [8080, 8081],
    expect: [
      /\{"accepted" : 1, "totalKwh" : 12\.5, "ledgerRef" : "LG-LOCAL-1"\}/,
      /\{"accepted" : 2, "totalKwh" : 15\.75, "ledgerRef" : "LG-LOCAL-1"\}/,
    ],
    timeoutMs: 120_000,
  },
];

const RUN = new Set(SCENARIOS.flatMap((s) => s.blocks));

/** Whole READMEs whose blocks are not run, and why. */
const NOT_RUN_FILES: readonly (readonly [RegExp, string])[] = [
  [
    /(^|\/)bench\/README\.md$/,
    'benchmarks: minutes each, some with extra tools (age, minisign), never in CI',
  ],
];
const notRunReason = (b: { file: string; key: string }) =>
  NOT_RUN[b.key] ?? NOT_RUN_FILES.find(([re]) => re.test(b.file))?.[1];

describe('README shell blocks: every one is run, or says what it needs first, or is listed with a reason', () => {
  it('finds the blocks of every README', () => {
    expect(BLOCKS.length).toBeGreaterThan(40);
    expect(new Set(BLOCKS.map((b) => b.file))).toContain('examples/http-upload-api/README.md');
    expect(byKey.size, 'keys are unique').toBe(BLOCKS.length);
  });

  it('every block is run here or in examples.test.ts, or is listed in NOT_RUN with a reason', () => {
    const unaccounted = BLOCKS.filter(
      (b) => !RUN.has(b.key) && !isExampleTestBlock(b) && notRunReason(b) === undefined,
    );
    expect(unaccounted.map((b) => `${b.file}:${b.line} ${b.key}`)).toEqual([]);
  });

  it('lists only blocks that exist (no stale entries)', () => {
    const stale = [...Object.keys(NOT_RUN), ...RUN].filter((k) => !byKey.has(k));
    expect(stale).toEqual([]);
  });

  it('a block that needs an earlier block, a server or files of its own says so first', () => {
    // The blocks of the scenarios after the first block of each: they run only after it, so they need it.
    const continued = SCENARIOS.flatMap((s) => s.blocks.slice(1));
    for (const key of continued) expect(byKey.get(key)?.note, key).toMatch(/^Needs first: /);
    expect(byKey.get('README.md: R=$PWD && cd "$(mktemp -d)"')?.note).toMatch(/packager running/);
  });

  it('writes oapp in the repository as `pnpm exec oapp`, or after a line that puts it on PATH', () => {
    const bare = BLOCKS.filter((b) => /^oapp /m.test(b.body) && b.note === undefined)
      .filter((b) => !/export PATH="\$PWD\/node_modules\/\.bin:\$PATH"/.test(b.body))
      .map((b) => b.key);
    expect(bare).toEqual([]);
  });
});

describe('shellBlocksOf (scripts/pack-install/readme-blocks.mjs)', () => {
  const md = (...lines: string[]) => lines.join('\n');

  it('takes sh and bash fences, with the "Needs first:" line before them across blank and marker lines', () => {
    const blocks = shellBlocksOf(
      md(
        'Text.',
        '',
        'Needs first: a server.',
        '',
        '<!-- marker -->',
        '',
        '```sh',
        'a',
        'b',
        '```',
        '',
        '```bash',
        'c',
        '```',
        '```ts',
        'x',
        '```',
      ),
    );
    expect(blocks).toEqual([
      { line: 7, lang: 'sh', body: 'a\nb', note: 'Needs first: a server.' },
      { line: 12, lang: 'bash', body: 'c', note: undefined },
    ]);
  });

  it('ignores a note that does not start the paragraph before the block, and refuses a note of two lines', () => {
    expect(shellBlocksOf(md('See: Needs first: x', '', '```sh', 'a', '```'))[0]?.note).toBeUndefined();
    expect(() => shellBlocksOf(md('Needs first: a', 'b.', '', '```sh', 'a', '```'), 'X.md')).toThrow(
      'X.md:1: a "Needs first:" note must be one line',
    );
    expect(() => shellBlocksOf(md('```sh', 'a'), 'Y.md')).toThrow('Y.md:1: the fence is not closed');
  });
});

/** The `oapp` command lines of a block: `[command, ...options]` with comments and line continuations removed. */
function oappCommands(body: string): string[][] {
  const text = body.replace(/\\\n/g, ' ');
  const lines = text.split('\n').map(withoutComment);
  return lines.flatMap((line) =>
    [...line.matchAll(/(?:^|[|;&(]|\bdo|\bexec|\bnpx|\$\()\s*oapp\s+([^|;&)<>]*)/g)].map((m) =>
      (m[1] ?? '').trim().split(/\s+/),
    ),
  );
}

const program = await createProgram(processContext(), () => undefined);

describe('README oapp command lines', () => {
  const commands = new Map(program.commands.map((c: Command) => [c.name(), c]));
  const flagsOf = (c: Command) =>
    new Set(
      c.options
        .flatMap((o) => [o.long, o.short])
        .filter(Boolean)
        .concat(['--help', '-h']),
    );

  it('name commands and options that exist', () => {
    const bad: string[] = [];
    let seen = 0;
    for (const b of BLOCKS) {
      for (const [cmd = '', ...args] of oappCommands(b.body)) {
        seen++;
        if (['--help', '--version', '-V', '-v'].includes(cmd)) continue;
        const c = commands.get(cmd);
        if (c === undefined) {
          bad.push(`${b.file}:${b.line}: no command ${cmd}`);
          continue;
        }
        for (const a of args.filter((x) => /^--?[a-zA-Z]/.test(x)).map((x) => x.replace(/=.*$/, ''))) {
          if (!flagsOf(c).has(a)) bad.push(`${b.file}:${b.line}: oapp ${cmd} has no option ${a}`);
        }
      }
    }
    expect(bad).toEqual([]);
    expect(seen).toBeGreaterThan(30);
  });
});

describe('README shell blocks, run', () => {
  let packager: Child | undefined;
  let packagerPort = 0;

  beforeAll(async () => {
    // "Needs first: the packager running": the built one, on a free port.
    packager = spawnMain(PACKAGER_MAIN, { PORT: '0', PACKAGER_RESOURCE_DIRS: tempDir() });
    packagerPort = (await listening(packager))['port'] as number;
  });

  afterAll(async () => {
    packager?.proc.kill('SIGTERM');
    await packager?.exited;
  });

  it.concurrent.each(SCENARIOS)(
    '$name',
    async (s) => {
      const ports = new Map<number, number>();
      for (const p of s.ports) ports.set(p, p === 39575 ? packagerPort : await freePort());
      const swap = (text: string) =>
        text.replace(/\b(8080|8081|39575)\b/g, (p) => String(ports.get(Number(p)) ?? p));
      const bodies = s.blocks.map((k) => swap(byKey.get(k)!.body));
      // The http-upload-api block reads the example's bootstrap, whose listener port is 8080: a copy with the port.
      const bootstrap = 'examples/http-upload-api/bootstrap.example.json';
      const cwd = s.ports.includes(8081)
        ? repositoryView({ [bootstrap]: swap(readFileSync(join(ROOT, bootstrap), 'utf8')) })
        : ROOT;
      const last = byKey.get(s.blocks.at(-1)!)!;
      // A block that ends in a foreground server (the agent README's "Run") is stopped once it listens.
      const foreground = !/&\s*$/m.test(last.body) && /dist\/main\.js/.test(last.body);
      const r = await runBlocks(bodies, {
        cwd,
        timeoutMs: s.timeoutMs,
        ...(foreground ? { until: /"msg":"listening"/ } : {}),
      }).finally(() => {
        // Links only (rm does not follow them), and the one copied file.
        if (cwd !== ROOT) rmSync(cwd, { recursive: true, force: true });
      });
      const report = `exit ${r.code} ${r.signal}\n--- stdout\n${r.stdout.slice(-4000)}\n--- stderr\n${r.stderr.slice(-4000)}`;
      if (!foreground) expect(r.code, report).toBe(0);
      for (const re of s.expect) expect(r.stdout, report).toMatch(re);
      expect(r.stdout + r.stderr, report).not.toMatch(/"level":"fatal"/);
    },
    // The scenario's own bound (45 s at most, then its processes are killed) and a margin; the five run at once,
    // about 20-30 s in all on this shared 2-core machine (agents and the packager start in 1-3 s each).
    50_000,
  );
});
