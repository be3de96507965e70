// The shell blocks of the repository's READMEs (```sh and ```bash fences), beside readme-examples.mjs, which takes
// their TypeScript examples. apps/cli/test/readme-shell-blocks.test.ts reads them: each block runs as written in a
// fresh clone, or the line right before it says what it needs first:
//
//   Needs first: the packager running on `127.0.0.1:39575` (previous section), `curl` and `jq`.
//
// (one line, its own paragraph; `<!-- … -->` marker lines, such as container-smoke's, may sit between it and the
// fence).
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/** Folders never searched for READMEs: dependencies, build output, tool state. */
const SKIP = new Set(['node_modules', 'dist', '.git', 'coverage']);
const SHELL = new Set(['sh', 'bash']);
/** The note that a block needs something first. */
export const NEEDS_FIRST = /^Needs first: \S/;

/** Every README.md of the repository, as paths relative to `root`, sorted. */
export function readmeFiles(root) {
  const walk = (dir) =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
      if (SKIP.has(e.name)) return [];
      const path = join(dir, e.name);
      if (e.isDirectory()) return walk(path);
      return e.name === 'README.md' ? [relative(root, path)] : [];
    });
  return walk(root).sort();
}

/**
 * The fenced blocks of a Markdown text whose info string is `sh` or `bash`: `{ line, lang, body, note }`, with
 * `line` the fence's line (1-based) and `note` the `Needs first:` line before it, if any. Throws on a fence that is
 * not closed, and on a `Needs first:` note that runs over more than one line.
 */
export function shellBlocksOf(text, file = 'README.md') {
  const lines = text.split('\n');
  const blocks = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w*)\s*$/.exec(lines[i]);
    if (!open) continue;
    const end = lines.indexOf('```', i + 1);
    if (end < 0) throw new Error(`${file}:${i + 1}: the fence is not closed`);
    if (SHELL.has(open[1])) {
      blocks.push({
        line: i + 1,
        lang: open[1],
        body: lines.slice(i + 1, end).join('\n'),
        note: noteBefore(lines, i, file),
      });
    }
    i = end;
  }
  return blocks;
}

/** The `Needs first:` line before the fence at `fence`, skipping blank lines and `<!-- … -->` marker lines. */
function noteBefore(lines, fence, file) {
  let j = fence - 1;
  while (j >= 0 && (lines[j].trim() === '' || /^<!--.*-->\s*$/.test(lines[j]))) j--;
  if (j < 0) return undefined;
  // The paragraph that ends at line j: its first line is the one to look at.
  let first = j;
  while (first > 0 && lines[first - 1].trim() !== '') first--;
  if (!NEEDS_FIRST.test(lines[first])) return undefined;
  if (first !== j) throw new Error(`${file}:${first + 1}: a "Needs first:" note must be one line`);
  return lines[first];
}

/** Every shell block of every README: `{ file, line, lang, body, note }`, in file order. */
export function shellBlocks(root) {
  return readmeFiles(root).flatMap((file) =>
    shellBlocksOf(readFileSync(join(root, file), 'utf8'), file).map((b) => ({ file, ...b })),
  );
}
