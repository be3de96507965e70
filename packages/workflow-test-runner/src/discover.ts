import { readdirSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import type { RunnerConfig } from './config-file.js';
import { TestRunnerError } from './errors.js';
import { quoteName } from './internal/text.js';
import { isInside } from './paths.js';

/** Suffix of a test file. */
export const TEST_FILE_SUFFIX = '.test.json';
/** Most test files one run accepts. */
export const MAX_TEST_FILES = 10_000;
/** Deepest directory nesting walked below a test directory. */
export const MAX_TEST_DEPTH = 32;

/** A test file found by {@link discoverTests}. */
export interface DiscoveredTest {
  /** Path relative to the project root, `/`-separated: the test's name in every report. */
  name: string;
  /** Absolute path of the file. */
  file: string;
  /** The test directory (absolute) that holds it. */
  testDir: string;
}

/**
 * Lists every `*.test.json` below the configured test directories, sorted by name (code-unit order, so the same
 * tree gives the same order on every machine). Symbolic links to directories are not followed; a linked test
 * file is listed, and reading it later refuses a link that leads out of its root (S155). With `only`, lists just
 * those files, each of which must lie inside a test directory.
 *
 * @param only - explicit test files (absolute, or relative to the project root).
 * @throws TestRunnerError `TESTRUNNER_TOO_MANY_TESTS`, `TESTRUNNER_FILE_NOT_FOUND` (a test directory is
 *   unreadable), `TESTRUNNER_PATH_OUTSIDE_ROOT` (an explicit file outside every test directory).
 */
export function discoverTests(config: RunnerConfig, only?: readonly string[]): DiscoveredTest[] {
  const found = new Map<string, DiscoveredTest>();
  const add = (file: string, testDir: string): void => {
    const name = relative(config.projectRoot, file).split(sep).join('/');
    if (!found.has(name)) found.set(name, { name, file, testDir });
    if (found.size > MAX_TEST_FILES) {
      throw new TestRunnerError('TESTRUNNER_TOO_MANY_TESTS', `more than ${MAX_TEST_FILES} test files`);
    }
  };
  if (only !== undefined && only.length > 0) {
    for (const f of only)
      add(resolve(config.projectRoot, f), owningDir(config, resolve(config.projectRoot, f), f));
  } else {
    for (const dir of config.testDirs) walk(dir, 0, (file) => add(file, dir));
  }
  return [...found.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

function owningDir(config: RunnerConfig, abs: string, given: string): string {
  const dir = config.testDirs.find((d) => isInside(d, abs));
  if (dir === undefined) {
    throw new TestRunnerError(
      'TESTRUNNER_PATH_OUTSIDE_ROOT',
      `test file ${quoteName(given)} is not inside a configured test directory`,
    );
  }
  return dir;
}

function walk(dir: string, depth: number, onFile: (file: string) => void): void {
  if (depth > MAX_TEST_DEPTH) return;
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch (cause) {
    throw new TestRunnerError(
      'TESTRUNNER_FILE_NOT_FOUND',
      `test directory ${quoteName(dir)} cannot be read`,
      {
        cause,
      },
    );
  }
  for (const e of entries) {
    const p = join(dir, e.name);
    if (e.isDirectory()) walk(p, depth + 1, onFile);
    else if ((e.isFile() || e.isSymbolicLink()) && e.name.endsWith(TEST_FILE_SUFFIX)) onFile(p);
  }
}
