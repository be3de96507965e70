// Extracts the README examples marked `<!-- example: runs as written ... -->` (the next ```ts fence) from
// the root README and every packages/*/README.md and apps/*/README.md, and writes each as an ES module:
//
//   node readme-examples.mjs <repository root> <output directory>
//
// prints one `<output file> <README path>` line per example, and writes what each prints (its `// prints: …`
// comments) beside it as <name>.expected. Run by scripts/pack-install-check.sh, which type
// checks them against the installed tarballs and runs them, so that a README example cannot drift.
import { mkdirSync, readdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';

const [root, out] = process.argv.slice(2);
if (!root || !out) throw new Error('usage: node readme-examples.mjs <repository root> <output directory>');
const MARK = /^<!-- example: runs as written\b.*-->\s*$/;
const SKETCH = /^<!-- sketch: .*-->\s*$/;
const readmes = ['README.md'];
for (const dir of ['packages', 'apps']) {
  for (const name of readdirSync(join(root, dir)).sort()) {
    if (existsSync(join(root, dir, name, 'README.md'))) readmes.push(`${dir}/${name}/README.md`);
  }
}
mkdirSync(out, { recursive: true });
let count = 0;
for (const readme of readmes) {
  const lines = readFileSync(join(root, readme), 'utf8').split('\n');
  let n = 0;
  for (let i = 0; i < lines.length; i++) {
    // Every ```ts block is either a runnable example or says it is a sketch (names an app's own objects).
    if (/^```ts\s*$/.test(lines[i])) {
      let j = i - 1;
      while (j > 0 && lines[j] === '') j--;
      if (!SKETCH.test(lines[j] ?? '') && !MARK.test(lines[j] ?? '')) {
        throw new Error(
          `${readme}:${i + 1}: a \`\`\`ts block needs <!-- example: runs as written … --> or <!-- sketch: … --> before it`,
        );
      }
      continue;
    }
    if (!MARK.test(lines[i])) continue;
    const mark = i + 1;
    while (lines[i + 1] === '') i++; // prettier puts a blank line between the mark and the fence
    const fence = /^```(ts)\s*$/.exec(lines[i + 1] ?? '');
    if (!fence) throw new Error(`${readme}:${mark}: an example mark must be followed by a \`\`\`ts fence`);
    const end = lines.indexOf('```', i + 2);
    if (end < 0) throw new Error(`${readme}:${i + 2}: the example's fence is not closed`);
    const name = `${readme.replace(/\/?README\.md$/, '').replaceAll('/', '-') || 'root'}-${++n}.m${fence[1]}`;
    // `export {}` makes the file a module even when the example imports nothing (top-level await needs one).
    const header = `// ${readme} line ${i + 2}, as written.\n`;
    const body = lines.slice(i + 2, end);
    // What the example prints: each console.log line ends in `// prints: <the line it prints>`.
    const expected = [];
    for (const [k, line] of body.entries()) {
      if (!line.includes('console.log(')) continue;
      const m = /\/\/ prints: (.*)$/.exec(line);
      if (!m)
        throw new Error(`${readme}:${i + 3 + k}: console.log in an example needs a \`// prints: …\` comment`);
      expected.push(m[1]);
    }
    writeFileSync(join(out, name), `${header}${body.join('\n')}\nexport {};\n`);
    writeFileSync(join(out, name.replace(/\.mts$/, '.expected')), expected.map((e) => `${e}\n`).join(''));
    console.log(`${name} ${readme}`);
    count++;
  }
}
if (count === 0) throw new Error('no README example is marked');
