// Packs the release tarball set: every public workspace package (packages/*, apps/*; never a `"private": true`
// one, such as @org/strict-json and @org/http-problem, which their consumers bundle with tsup `noExternal`).
//
//   node scripts/pack-install/pack-release.mjs <destination directory>    (at the root: pnpm -s pack:release DIR)
//   node scripts/pack-install/pack-release.mjs --list                     (the package directories, nothing packed)
//
// `pnpm pack` of each package, so `workspace:` and `catalog:` ranges become plain versions. Refuses (exit 1, before
// packing anything) when a public package depends at run time on a private one: npm could not install that
// dependency outside the repository (or would take a stranger's package of that name from the registry).
// Prints one tarball path per line. Used by the root README's release commands and by
// scripts/pack-install-check.sh, so that what a user packs is what the check installs.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(fileURLToPath(import.meta.url), '..', '..', '..');

/** The workspace's packages as pnpm lists them (pnpm-workspace.yaml), with their package.json. */
function workspacePackages() {
  const listed = JSON.parse(execFileSync('pnpm', ['ls', '-r', '--depth', '-1', '--json'], { cwd: ROOT }));
  return listed
    .filter(({ path }) => resolve(path) !== ROOT)
    .map(({ path }) => ({
      dir: relative(ROOT, path),
      pkg: JSON.parse(readFileSync(join(path, 'package.json'), 'utf8')),
    }))
    .filter(({ dir }) => /^(packages|apps)\//.test(dir))
    .sort((a, b) => a.dir.localeCompare(b.dir));
}

/** The public packages; throws when one of them needs a private one at run time. */
export function releasePackages() {
  const all = workspacePackages();
  const privateNames = new Set(all.filter(({ pkg }) => pkg.private === true).map(({ pkg }) => pkg.name));
  const chosen = all.filter(({ pkg }) => pkg.private !== true);
  const problems = [];
  for (const { pkg } of chosen) {
    for (const field of ['dependencies', 'optionalDependencies', 'peerDependencies']) {
      for (const dep of Object.keys(pkg[field] ?? {})) {
        if (privateNames.has(dep)) {
          problems.push(
            `${pkg.name}: ${field} names the private ${dep}: bundle it (tsup noExternal) as a devDependency`,
          );
        }
      }
    }
  }
  if (problems.length > 0) throw new Error(`pack-release: ${problems.join('; ')}`);
  return { chosen, privateNames: [...privateNames].sort() };
}

function main(args) {
  if (args.length !== 1 || (args[0].startsWith('-') && args[0] !== '--list')) {
    console.error('usage: node scripts/pack-install/pack-release.mjs <destination directory> | --list');
    process.exit(2);
  }
  const { chosen } = releasePackages();
  if (args[0] === '--list') {
    for (const { dir } of chosen) console.log(dir);
    return;
  }
  const dest = resolve(args[0]);
  mkdirSync(dest, { recursive: true });
  for (const { dir } of chosen) {
    const out = execFileSync('pnpm', ['pack', '--pack-destination', dest], {
      cwd: join(ROOT, dir),
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    // pnpm pack's last line is the tarball's path.
    const tarball = out.trimEnd().split('\n').at(-1) ?? '';
    if (!tarball.endsWith('.tgz') || !existsSync(tarball))
      throw new Error(`pack-release: pnpm pack in ${dir} made no tarball`);
    console.log(tarball);
  }
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    main(process.argv.slice(2));
  } catch (err) {
    console.error(err instanceof Error ? err.message : String(err));
    process.exit(1);
  }
}
