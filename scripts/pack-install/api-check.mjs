// Run in the scratch project by scripts/pack-install-check.sh: `node api-check.mjs <package name>...`.
// For each installed library: the ESM entry loads, every runtime export of its main entry is documented in its
// README (named in backticks), and `./internal`, when the package has it, loads and is documented as unstable.
// Writes esm-exports.json (the export names) for require-check.cjs to compare with.
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const problems = [];
const exportsOf = {};
for (const name of process.argv.slice(2)) {
  const pkgJson = require.resolve(`${name}/package.json`);
  const pkg = JSON.parse(readFileSync(pkgJson, 'utf8'));
  const readme = readFileSync(pkgJson.replace(/package\.json$/, 'README.md'), 'utf8');
  const documented = new Set([...readme.matchAll(/`([A-Za-z_$][\w$]*)/g)].map((m) => m[1]));
  const main = await import(name);
  exportsOf[name] = Object.keys(main).sort();
  const undocumented = exportsOf[name].filter((k) => k !== 'default' && !documented.has(k));
  if (undocumented.length > 0)
    problems.push(`${name}: exported but not in its README: ${undocumented.join(', ')}`);
  if (pkg.exports?.['./internal']) {
    const internal = await import(`${name}/internal`);
    exportsOf[`${name}/internal`] = Object.keys(internal).sort();
    if (!readme.includes(`${name}/internal`))
      problems.push(`${name}: README does not document ${name}/internal`);
    const both = exportsOf[`${name}/internal`].filter((k) => exportsOf[name].includes(k));
    if (both.length > 0)
      problems.push(`${name}: exported by both the main entry and ./internal: ${both.join(', ')}`);
  }
}
writeFileSync('esm-exports.json', JSON.stringify(exportsOf, null, 2));
if (problems.length > 0) {
  for (const p of problems) console.error(`  ${p}`);
  process.exit(1);
}
console.log(`${Object.keys(exportsOf).length} ESM entries loaded, every main export documented`);
