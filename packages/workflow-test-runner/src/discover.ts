import { closeSync, constants, fstatSync, openSync, readdirSync, readSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import type { RunnerConfig } from './config-file.js';
import { TestRunnerError } from './errors.js';
import { quoteName } from './internal/text.js';
import { isInside } from './paths.js';
import type { MisnamedTestWarning } from './warnings.js';

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

/**
 * Visits the test files below `dir` (`onFile`) and, with `onOther`, every other regular file (symbolic links
 * excluded: they are never read to find tests).
 */
function walk(
  dir: string,
  depth: number,
  onFile: (file: string) => void,
  onOther?: (file: string, name: string) => void,
): void {
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
    if (e.isDirectory()) walk(p, depth + 1, onFile, onOther);
    else if ((e.isFile() || e.isSymbolicLink()) && e.name.endsWith(TEST_FILE_SUFFIX)) onFile(p);
    else if (e.isFile()) onOther?.(p, e.name);
  }
}

/** How much of a file is read to tell whether it is a test: the test fields come first in real suites. */
export const TEST_SNIFF_BYTES = 64 * 1024;

/** A member that only a test file has (`testThisRoute` is the legacy name of `testThisStep`). */
const TEST_FIELD = /"(testThisStep|testThisRoute)"\s*:/;

/** Names worth reading: JSON files and anything named like a test (`x.testjson`, `x-test.json`, `x.Test.JSON`). */
const CANDIDATE_NAME = /test|json/i;

/** The test field in the first {@link TEST_SNIFF_BYTES} of a regular file, if any; unreadable files have none. */
function testFieldOf(file: string): string | undefined {
  let fd: number | undefined;
  try {
    // O_NOFOLLOW: a link swapped in since the listing is not followed; O_NONBLOCK: a FIFO cannot stall the read.
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    if (!fstatSync(fd).isFile()) return undefined;
    const buf = Buffer.alloc(TEST_SNIFF_BYTES);
    const n = readSync(fd, buf, 0, buf.length, 0);
    return TEST_FIELD.exec(buf.subarray(0, n).toString('utf8'))?.[1];
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * The files below the configured test directories that look like tests (a JSON object member `testThisStep` or
 * `testThisRoute` near the start) but will not run because their name does not end in {@link TEST_FILE_SUFFIX}
 * (the reference's suites hold such files: `split-merge.testjson`, `auth-proc-direct-test.json`). Sorted by
 * name; symbolic links are not read.
 *
 * @throws TestRunnerError `TESTRUNNER_FILE_NOT_FOUND` (a test directory is unreadable).
 */
export function findMisnamedTests(config: RunnerConfig): MisnamedTestWarning[] {
  const found: MisnamedTestWarning[] = [];
  const seen = new Set<string>();
  for (const dir of config.testDirs) {
    walk(
      dir,
      0,
      () => undefined,
      (file, name) => {
        const rel = relative(config.projectRoot, file).split(sep).join('/');
        if (seen.has(rel) || !CANDIDATE_NAME.test(name)) return;
        seen.add(rel);
        const field = testFieldOf(file);
        if (field !== undefined) found.push({ kind: 'misnamed-test', file: rel, field });
      },
    );
  }
  return found.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
}
