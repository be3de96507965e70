import { existsSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import type { JsonObject } from '@org/workflow-compiler';
import { TestRunnerError } from './errors.js';
import { runnerConfig as validateConfig } from './generated/validators.js';
import { isTrue, MAX_JSON_FILE_BYTES, plainObject, readJson } from './internal/json.js';
import { checkSchema } from './internal/schema-check.js';
import { quoteName } from './internal/text.js';
import { noteLegacy, type LegacyNotice } from './legacy.js';
import { isInside, readConfinedFile, realDirectory, resolveConfigDir } from './paths.js';

/** A `testrunner.config.json`, validated and resolved. Every directory is absolute. */
export interface RunnerConfig {
  /** The directory of the config file: every directory in it is relative to this, and must stay inside it. */
  projectRoot: string;
  /** How the config file is named in messages. */
  file: string;
  /** Resource directories for the compiler, searched in order. */
  resourceDirs: string[];
  /** Directories searched for `*.test.json`. */
  testDirs: string[];
  /**
   * Our extension: the directory every file of every test must stay inside (S155). Default: the test directory
   * that holds the test. Set it (for example to `"."`) for suites whose tests read workflows beside the tests.
   */
  fileRoot: string | undefined;
  /** Tests run at once. Default 1. */
  concurrency: number;
  /** Times each test is run. Default 1. */
  iterations: number;
  /** Start no further test after the first failure. Default false. */
  stopOnFailure: boolean;
  /** Passed to the deployer (more diagnostics). Default false. */
  debug: boolean;
  /** Variables for `${NAME}` in test bootstraps, overridden by a test's own `variables`. */
  variables: Record<string, string>;
  /** Legacy fields found (see `LegacyNotice`). */
  legacy: LegacyNotice[];
}

/** Options of {@link parseRunnerConfig}. */
export interface ParseRunnerConfigOptions {
  /** Absolute directory the config's paths are relative to. */
  projectRoot: string;
  /** Name of the config in messages. Default `testrunner.config.json`. */
  file?: string;
}

/**
 * Parses and validates `testrunner.config.json` text (docs/interfaces.md §7.2): strict JSON, exactly one of
 * `resourceDir|resourceDirs` and of `testDir|testDirs`, every directory inside the project root. Reads no files.
 *
 * @throws TestRunnerError `TESTRUNNER_JSON_INVALID`, `TESTRUNNER_CONFIG_INVALID` (every violation in
 *   `details.errors` as `{ file, pointer, detail }`), `TESTRUNNER_PATH_INVALID`, `TESTRUNNER_PATH_OUTSIDE_ROOT`.
 */
export function parseRunnerConfig(
  input: Uint8Array | string,
  options: ParseRunnerConfigOptions,
): RunnerConfig {
  const file = options.file ?? 'testrunner.config.json';
  const value = readJson(input, file);
  checkSchema(validateConfig, value, 'TESTRUNNER_CONFIG_INVALID', file);
  const c = value as JsonObject;
  const root = options.projectRoot;
  const dirs = (one: string, many: string): string[] => {
    const list = (c[many] as string[] | undefined) ?? [c[one] as string];
    return list.map((d, i) => resolveConfigDir(root, d, c[many] === undefined ? one : `${many}[${i}]`));
  };
  const legacy: LegacyNotice[] = [];
  if (c['license'] !== undefined) noteLegacy(legacy, 'license', file);
  const fileRoot =
    c['fileRoot'] === undefined ? undefined : resolveConfigDir(root, c['fileRoot'] as string, 'fileRoot');
  const testDirs = dirs('testDir', 'testDirs');
  if (fileRoot !== undefined && !testDirs.every((d) => isInside(fileRoot, d))) {
    throw new TestRunnerError(
      'TESTRUNNER_CONFIG_INVALID',
      `${file}: every test directory must lie inside fileRoot`,
      {
        details: {
          errors: [{ file, pointer: '/fileRoot', detail: 'does not contain every test directory' }],
        },
      },
    );
  }
  return {
    projectRoot: root,
    file,
    resourceDirs: dirs('resourceDir', 'resourceDirs'),
    testDirs,
    fileRoot,
    concurrency: (c['concurrency'] as number | undefined) ?? 1,
    iterations: (c['iterations'] as number | undefined) ?? 1,
    stopOnFailure: isTrue(c['stopOnFailure']),
    debug: isTrue(c['debug']),
    variables: plainObject(Object.entries((c['variables'] as Record<string, string> | undefined) ?? {})),
    legacy,
  };
}

/**
 * Reads `testrunner.config.json` from disk and parses it with {@link parseRunnerConfig}; its directory is the
 * project root. Every test directory must exist.
 *
 * @param path - path of the config file (absolute, or relative to the process's working directory).
 * @throws TestRunnerError the codes of {@link parseRunnerConfig}; `TESTRUNNER_FILE_NOT_FOUND`,
 *   `TESTRUNNER_FILE_TOO_LARGE`; `TESTRUNNER_PATH_OUTSIDE_ROOT` when a configured directory is a symbolic link
 *   out of the project.
 */
export function loadRunnerConfig(path: string): RunnerConfig {
  const abs = resolve(path);
  const projectRoot = realDirectory(dirname(abs), 'the config directory');
  const file = basename(abs);
  const root = { base: projectRoot, dir: projectRoot, real: projectRoot };
  const { bytes } = readConfinedFile(root, join(projectRoot, file), MAX_JSON_FILE_BYTES, file);
  const config = parseRunnerConfig(bytes, { projectRoot, file });
  // S155: a configured directory that is a symbolic link out of the project is refused like a "..".
  const confine = (dir: string, what: string): void => {
    if (!isInside(projectRoot, realDirectory(dir, what))) {
      throw new TestRunnerError(
        'TESTRUNNER_PATH_OUTSIDE_ROOT',
        `${what} ${quoteName(relative(projectRoot, dir))} is a symbolic link out of the project`,
      );
    }
  };
  for (const dir of config.testDirs) confine(dir, 'test directory');
  if (config.fileRoot !== undefined) confine(config.fileRoot, 'fileRoot');
  for (const dir of config.resourceDirs) if (existsSync(dir)) confine(dir, 'resource directory');
  return config;
}
