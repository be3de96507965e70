import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The repository's Markdown: curl examples fail on HTTP errors and keep the problem body, key-gen answers land in
// 0600 files, and no document points outside the repository.
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const SKIP = new Set(['node_modules', 'dist', '.git', 'coverage']);

function markdownFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    if (SKIP.has(e.name)) return [];
    const path = join(dir, e.name);
    if (e.isDirectory()) return markdownFiles(path);
    return e.name.endsWith('.md') && e.name !== 'CHANGELOG.md' ? [path] : [];
  });
}

const docs = markdownFiles(ROOT).map((path) => ({
  path: relative(ROOT, path),
  text: readFileSync(path, 'utf8'),
}));

/** Text files of the trees whose citations must resolve inside the repository. */
const TEXT_FILE = /\.(?:[cm]?[jt]s|json|md|sh|ya?ml|txt)$/;
function textFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    if (SKIP.has(e.name)) return [];
    const path = join(dir, e.name);
    if (e.isDirectory()) return textFiles(path);
    return TEXT_FILE.test(e.name) ? [path] : [];
  });
}

/**
 * Citations of documents that live outside the repository: the engineering rules and the toolchain notes are
 * docs/engineering.md and docs/toolchain.md here. A named `.md` file or a `../` path passes when it resolves, from
 * the citing file's folder or from the repository root, to a file in the repository.
 */
const NEVER_HERE = /\bhouse[ -]style\b|\bshared\/(?:design|reference|seed)\//gi;
const NAMED_DOC = /[\w./-]*\b(?:toolchain|package-format)\.md\b/g;
const SHARED_PATH = /(?:\.\.\/)+shared\b[\w./-]*/g;

function unresolvedCitations(file: string, text: string): string[] {
  const here = dirname(file);
  const resolves = (cited: string) => [resolve(here, cited), resolve(ROOT, cited)].some((p) => existsSync(p));
  return [
    ...[...text.matchAll(NEVER_HERE)].map((m) => m[0]),
    ...[...text.matchAll(NAMED_DOC), ...text.matchAll(SHARED_PATH)]
      .map((m) => m[0])
      .filter((c) => !resolves(c)),
  ].map((c) => `${relative(ROOT, file)}: ${c}`);
}

/** Lines that run curl: it starts the line or follows `do`, `;`, `&&`, `|`, `$(` (not prose about curl). */
const CURL_COMMAND = /(?:^\s*|\bdo\s+|[;&|(]\s*|\$\()curl\s/;

describe('documentation', () => {
  it('finds the Markdown files', () => {
    expect(docs.map((d) => d.path)).toContain('README.md');
  });

  it('runs every curl example with --fail-with-body', () => {
    const bad = docs.flatMap((d) =>
      d.text
        .split('\n')
        .map((line, i) => ({ line, at: `${d.path}:${i + 1}` }))
        .filter(({ line }) => CURL_COMMAND.test(line) && !line.includes('--fail-with-body'))
        .map(({ at }) => at),
    );
    expect(bad).toEqual([]);
  });

  it('writes key-gen answers (secret keys) only after umask 077', () => {
    for (const d of docs) {
      const lines = d.text.split('\n');
      const writes = lines.findIndex((l) => l.includes('/key-gen?purpose=') && /(?:>|-o)\s*"?\$?\w/.test(l));
      if (writes === -1) continue;
      const umask = lines.findIndex((l) => /^\s*umask 0?077\b/.test(l));
      expect(umask, `${d.path}: umask 077 before line ${writes + 1}`).toBeGreaterThanOrEqual(0);
      expect(umask, d.path).toBeLessThan(writes);
    }
  });

  it('cites only documents that are in the repository (code, tests, docs, tools, scripts, README)', () => {
    const files = [
      ...['packages', 'apps', 'docs', 'tools', 'scripts'].flatMap((d) => textFiles(join(ROOT, d))),
      join(ROOT, 'README.md'),
    ];
    expect(files.length).toBeGreaterThan(100);
    const bad = files.flatMap((f) => unresolvedCitations(f, readFileSync(f, 'utf8')));
    expect(bad).toEqual([]);
  });

  it('never points to files outside the repository', () => {
    const bad = docs.filter((d) => /\.\.\/shared\b|\/work\//.test(d.text)).map((d) => d.path);
    expect(bad).toEqual([]);
  });
});
