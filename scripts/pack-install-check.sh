#!/usr/bin/env bash
# Installs the `oapp` command line the way a project outside this repository does, and runs it.
#
#   bash scripts/pack-install-check.sh [--no-build] [--all] [--keep]
#
# 1. builds (unless --no-build) and `pnpm pack`s @org/cli and every workspace package it depends on, directly or
#    not (dependencies, optionalDependencies and peerDependencies, read from the package.json files; --all adds
#    every other non-private workspace package), into a temporary directory;
# 2. checks each packed package.json: not private, public access, no `workspace:`/`catalog:` left, license,
#    engines, files, every bin/main/types/exports target in the tarball, every package its JavaScript imports
#    declared (npm's flat node_modules would hide a missing one);
# 3. makes a project outside the repository (`mktemp -d`, `npm init -y`) and `npm install`s all tarballs at once,
#    then checks that npm took every @org package from a tarball, never from a registry;
# 4. imports every installed @org package, runs one sandboxed step and one LMDB store when @org/workflow-engine is
#    installed (its dist/sandbox/ files, the QuickJS wasm and LMDB's addon must load from node_modules), and runs
#    the installed `oapp`:
#    --version, keygen, package/verify/open round trips of a file and of a workflow, and one `oapp test`.
# Prints `pack-install: ok` last, or fails. Nothing is written to the repository; --keep leaves the temporary
# directory in place (its path is printed). Third-party dependencies come from the npm registry npm is set up for.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=1 all=0 keep=0
for arg in "$@"; do
  case "$arg" in
    --no-build) build=0 ;;
    --all) all=1 ;;
    --keep) keep=1 ;;
    *) echo "pack-install: unknown argument $arg (use --no-build, --all, --keep)" >&2; exit 2 ;;
  esac
done

work=$(mktemp -d "${TMPDIR:-/tmp}/oapp-pack-install.XXXXXX")
cleanup() { if [ "$keep" = 1 ]; then echo "pack-install: kept $work" >&2; else rm -rf "$work"; fi; }
trap cleanup EXIT
step() { echo "pack-install: $*"; }
fail() { echo "pack-install: FAILED: $*" >&2; exit 1; }
trap 'echo "pack-install: FAILED: line $LINENO: $BASH_COMMAND" >&2' ERR

# --- 1. which workspace packages: @org/cli and its workspace dependencies, transitively ------------------------
# The workspace's packages as pnpm lists them (pnpm-workspace.yaml), then their package.json files.
select_js=$(cat <<'JS'
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
const listed = JSON.parse(readFileSync(0, 'utf8'));
const root = process.cwd();
const byName = new Map();
for (const { path } of listed) {
  const pkg = JSON.parse(readFileSync(join(path, 'package.json'), 'utf8'));
  if (path !== root) byName.set(pkg.name, { dir: relative(root, path), pkg });
}
const runtimeDeps = (pkg) => ({ ...pkg.dependencies, ...pkg.optionalDependencies, ...pkg.peerDependencies });
const chosen = new Set();
const visit = (name, from) => {
  const entry = byName.get(name);
  if (!entry) throw new Error(`${from} depends on ${name}, which is not a workspace package`);
  if (chosen.has(name)) return;
  chosen.add(name);
  for (const [dep, spec] of Object.entries(runtimeDeps(entry.pkg))) {
    if (String(spec).startsWith('workspace:') || byName.has(dep)) visit(dep, name);
  }
};
visit('@org/cli', 'the check');
if (process.env.ALL === '1') for (const [name, { pkg }] of byName) if (pkg.private !== true) visit(name, 'the check');
for (const name of [...chosen].sort()) console.log(byName.get(name).dir);
JS
)
list=$(cd "$root" && pnpm ls -r --depth -1 --json | ALL="$all" node --input-type=module -e "$select_js") ||
  fail "reading the workspace's package.json files"
mapfile -t dirs <<<"$list"
[ "${#dirs[@]}" -gt 0 ] || fail "no workspace packages found"
names=()
for d in "${dirs[@]}"; do names+=("$(node -p "require('$root/$d/package.json').name")"); done
step "packages: ${names[*]}"

if [ "$build" = 1 ]; then
  step "building"
  filters=()
  for n in "${names[@]}"; do filters+=(--filter "$n"); done
  (cd "$root" && pnpm -s "${filters[@]}" run build) >"$work/build.log" 2>&1 || { cat "$work/build.log" >&2; fail "build"; }
fi

# --- 2. pack into the temporary directory and check each packed manifest ----------------------------------------
mkdir -p "$work/tarballs" "$work/unpacked"
for d in "${dirs[@]}"; do
  (cd "$root/$d" && pnpm pack --pack-destination "$work/tarballs") >>"$work/pack.log" 2>&1 || {
    cat "$work/pack.log" >&2
    fail "pnpm pack in $d"
  }
done
shopt -s nullglob
tarballs=("$work"/tarballs/*.tgz)
shopt -u nullglob
[ "${#tarballs[@]}" = "${#dirs[@]}" ] || fail "expected ${#dirs[@]} tarballs, found ${#tarballs[@]}"
for t in "${tarballs[@]}"; do
  u="$work/unpacked/$(basename "$t" .tgz)"
  mkdir -p "$u" && tar -xzf "$t" -C "$u"
done
UNPACKED="$work/unpacked" node --input-type=module <<'JS' || fail "packed package.json check"
import { builtinModules } from 'node:module';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
const problems = [];
const builtins = new Set(builtinModules);
const filesUnder = (dir) =>
  readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath ?? e.path, e.name));
const targets = (v) => (typeof v === 'string' ? [v] : v && typeof v === 'object' ? Object.values(v).flatMap(targets) : []);
// Bare specifiers of static and dynamic imports and requires in built JavaScript.
const IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+|\brequire(?:\.resolve)?\s*\(\s*|\)\s*\(\s*)["']([^"'./][^"']*)["']/g;
const packageOf = (s) => (s.startsWith('@') ? s.split('/').slice(0, 2).join('/') : s.split('/')[0]);
for (const t of readdirSync(process.env.UNPACKED)) {
  const dir = join(process.env.UNPACKED, t, 'package');
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  const say = (m) => problems.push(`${pkg.name}: ${m}`);
  if (pkg.private === true) say('is private: it cannot be published, so an install outside the repository fails');
  if (!pkg.license) say('has no license');
  if (pkg.name.startsWith('@') && pkg.publishConfig?.access !== 'public') {
    say('is scoped without publishConfig.access "public": npm would publish it as restricted');
  }
  if (!pkg.engines?.node) say('has no engines.node');
  if (!Array.isArray(pkg.files)) say('has no files list');
  for (const field of ['dependencies', 'optionalDependencies', 'peerDependencies']) {
    for (const [dep, spec] of Object.entries(pkg[field] ?? {})) {
      if (/^(workspace|catalog):/.test(spec)) say(`${field}.${dep} is still "${spec}" in the packed package.json`);
    }
  }
  const declared = new Set(Object.keys({ ...pkg.dependencies, ...pkg.optionalDependencies, ...pkg.peerDependencies }));
  for (const target of [...targets(pkg.bin), ...targets(pkg.main), ...targets(pkg.types), ...targets(pkg.exports)]) {
    if (!target.includes('*') && !existsSync(join(dir, target))) say(`names ${target}, which is not in the tarball`);
  }
  const js = filesUnder(dir).filter((f) => /\.(m|c)?js$/.test(f));
  if (pkg.bin === undefined && pkg.exports === undefined && pkg.main === undefined) say('has no bin, main or exports');
  for (const file of js) {
    for (const m of readFileSync(file, 'utf8').matchAll(IMPORT)) {
      const spec = m[1];
      // Only what could name a package: text such as `from "${x}"` in a message is not an import.
      if (!/^(@[a-z0-9][\w.-]*\/)?[a-z0-9][\w.-]*(\/[\w.@-]+)*$/i.test(spec)) continue;
      if (spec.startsWith('node:') || builtins.has(spec) || builtins.has(packageOf(spec))) continue;
      if (!declared.has(packageOf(spec))) say(`${relative(dir, file)} imports ${spec}, not in dependencies`);
    }
  }
}
if (problems.length > 0) {
  for (const p of problems) console.error(`  ${p}`);
  process.exit(1);
}
JS
step "packed ${#tarballs[@]} tarballs; manifests checked"

# --- 3. a project outside the repository, every tarball installed in one npm install ----------------------------
project="$work/project"
mkdir -p "$project"
cd "$project"
case "$project/" in "$root"/*) fail "the temporary project $project is inside the repository" ;; esac
npm init -y >/dev/null
step "npm install (npm $(npm --version), node $(node --version))"
npm install --no-audit --no-fund --loglevel=error "${tarballs[@]}" >"$work/npm.log" 2>&1 || {
  cat "$work/npm.log" >&2
  fail "npm install"
}
# Every @org package must come from one of the tarballs (a registry may hold unrelated packages of the same name).
node --input-type=module <<'JS' || fail "npm did not take every @org package from the tarballs"
import { readFileSync } from 'node:fs';
const lock = JSON.parse(readFileSync('package-lock.json', 'utf8'));
let bad = 0;
for (const [path, entry] of Object.entries(lock.packages)) {
  if (!/(^|\/)node_modules\/@org\//.test(path)) continue;
  if (!String(entry.resolved).startsWith('file:')) {
    console.error(`  ${path} resolved from ${entry.resolved}`);
    bad++;
  }
}
process.exit(bad === 0 ? 0 : 1);
JS
for n in "${names[@]}"; do
  [ -f "node_modules/$n/package.json" ] || fail "$n is not installed in node_modules"
done

# --- 4. use what was installed -----------------------------------------------------------------------------------
for n in "${names[@]}"; do
  if [ "$n" != "@org/cli" ]; then
    node --input-type=module -e "await import('$n')" || fail "import('$n') in the installed project"
  fi
done
if [ -d node_modules/@org/workflow-engine ]; then
  # The engine's realm scripts and worker (dist/sandbox/) and the QuickJS wasm (a dependency) are found at run
  # time relative to the installed package: run one sandboxed step. From a file: the sandbox's worker threads
  # inherit node's options, and `--input-type` is refused for a worker's file entry.
  cat >engine-smoke.mjs <<'JS'
import { mkdtempSync } from 'node:fs';
import { createLmdbPersistence, createWorkflowEngine } from '@org/workflow-engine';
const host = {
  callOutbound: async () => ({ status: 200, headers: {}, body: new Uint8Array() }),
  getRestrictedData: async () => '{}',
  registerSecret() {},
  log() {},
  metric() {},
  now: () => Date.now(),
};
const script = "context.setBody('hello ' + context.getBody());";
const wf = { workflows: [{ name: 'smoke', steps: [{ stepId: 's', resultsProcessor: { script } }] }] };
const engine = await createWorkflowEngine(wf, { host, data: {} });
const result = await engine.runStep('s', { body: 'sandbox', stream: undefined, headers: {}, properties: {} });
engine.dispose();
if (result.errored || result.body !== 'hello sandbox') {
  console.error('  unexpected result', JSON.stringify(result));
  process.exit(1);
}
// LMDB's prebuilt addon, a dependency's optional package, loads from the installed tree too.
const persistence = createLmdbPersistence({ dataDir: mkdtempSync('lmdb-') });
const store = await persistence.open('s', { file: 'smoke', flush: true, hexSymmetricKey: undefined, obfuscate: false });
store.setItem('k', 'stored');
const stored = store.getItem('k');
await persistence.close();
if (stored !== 'stored') {
  console.error('  unexpected stored value', JSON.stringify(stored));
  process.exit(1);
}
process.exit(0);
JS
  node engine-smoke.mjs || fail "a sandboxed step with the installed @org/workflow-engine"
  step "@org/workflow-engine ran a sandboxed step and opened an LMDB store"
fi

want="oapp $(node -p "require('./node_modules/@org/cli/package.json').version") "
got=$(npx --no-install oapp --version)
case "$got" in "$want"*) ;; *) fail "npx oapp --version printed \"$got\", expected \"$want…\"" ;; esac
step "$got"
export PATH="$project/node_modules/.bin:$PATH"
[ "$(command -v oapp)" = "$project/node_modules/.bin/oapp" ] || fail "oapp is not the installed binary"

oapp keygen --purpose authenticated -o packager.key >/dev/null
oapp keygen --purpose authenticated -o deployment.key >/dev/null
oapp keygen --purpose sign -o author.key >/dev/null
for f in packager.key packager.pub deployment.key deployment.pub author.key author.pub; do
  [ -s "$f" ] || fail "oapp keygen did not write $f"
done
policy=(--package-id hello --packager packager.pub --required-signer author.pub)

# A file, packaged unchanged and opened again.
printf 'hello from outside the repository\n%s\n' "$(date -u +%FT%TZ)" >hello.txt
oapp package --raw hello.txt -o hello.oapp --package-id hello \
  --packager-key packager.key --recipient deployment.pub --signer author.key --sign-text "pack-install"
oapp verify hello.oapp "${policy[@]}" >/dev/null
oapp open hello.oapp -o hello.out --key deployment.key "${policy[@]}"
cmp hello.txt hello.out || fail "oapp open did not give back the packaged file"

# A workflow: compiled, packaged, opened; the opened content hashes to the packaged workflow hash.
cat >workflow.json <<'JSON'
{ "workflows": [{ "name": "hello", "steps": [{ "stepId": "hello",
  "trigger": { "http": { "server": "api", "method": "POST", "path": "/hello" } },
  "resultsProcessor": { "script": "context.setBody('hello ' + context.getBody());" } }] }] }
JSON
packaged=$(oapp package workflow.json -o workflow.oapp --package-id hello --json \
  --packager-key packager.key --recipient deployment.pub --signer author.key --sign-text "pack-install")
oapp open workflow.oapp -o opened.json --key deployment.key "${policy[@]}"
hash=$(oapp hash opened.json)
packaged_hash=$(node -p 'JSON.parse(process.argv[1]).workflowHash' "$packaged")
[ "$hash" = "$packaged_hash" ] || fail "the opened workflow hashes to $hash, the package says $packaged_hash"
step "keygen, package, verify, open and hash ran from node_modules/.bin/oapp"

# A workflow test: the engine's sandbox, the runtime and the test runner, all from node_modules.
mkdir -p wt/tests wt/resources
cp workflow.json wt/tests/flow.json
cat >wt/tests/boot.json <<'JSON'
{ "allowHttpServerAccess": [{ "id": "api", "port": 8080 }] }
JSON
cat >wt/tests/hello.test.json <<'JSON'
{ "fromDirectory": "", "testThisStep": "hello", "useThisTestConfigFile": "flow.json",
  "useThisTestBootstrapFile": "boot.json",
  "makeTheseCalls": [{ "url": "http://localhost:8080/hello", "method": "POST", "body": "world",
    "headers": [["Content-Type", "text/plain"]], "expectedResponse": "hello world" }] }
JSON
echo '{ "resourceDirs": ["resources"], "testDirs": ["tests"] }' >wt/testrunner.config.json
summary=$(oapp test wt/testrunner.config.json | tail -n 1) || fail "oapp test failed: $summary"
[ "$summary" = "1 passed, 0 failed, 0 skipped" ] || fail "oapp test printed \"$summary\""
step "oapp test ran a workflow test on the installed engine and runtime"
step "${SECONDS} s in all"

echo "pack-install: ok"
