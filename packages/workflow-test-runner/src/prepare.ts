import { basename, dirname, relative, sep } from 'node:path';
import type { CompiledWorkflow, DeploymentRecord } from '@org/workflow-compiler';
import type { RunnerConfig } from './config-file.js';
import type { DiscoveredTest } from './discover.js';
import { MAX_JSON_FILE_BYTES, plainObject, readJson } from './internal/json.js';
import type { MockEndpoint } from './mock-server.js';
import { isMockUrl } from './mock-url.js';
import {
  readConfinedFile,
  realDirectory,
  resolveFromDirectory,
  resolveTestFile,
  type TestRoot,
} from './paths.js';
import { mergeTestBootstrap } from './prepare-bootstrap.js';
import { buildTestWorkflow } from './prepare-workflow.js';
import { parseTestFile, type CallSpec, type TestSpec } from './test-file.js';

/** Largest `returnThisFile` served by the mock: 16 MiB. */
export const MAX_MOCK_FILE_BYTES = 16 * 1024 * 1024;

/** A test file read and validated, with the root its files must stay inside. */
export interface LoadedTest {
  test: DiscoveredTest;
  spec: TestSpec;
  root: TestRoot;
}

/** Everything a deployer needs to run one test, built without touching the network. */
export interface PreparedTest {
  /** The test's name (path relative to the project root). */
  name: string;
  /** The deployment id in the bootstrap (also `${testDeploymentId}`). */
  deploymentId: string;
  /** The step to trigger (`testThisStep`). */
  stepId: string;
  /** The compiled workflow under test: resources inlined, comments gone. */
  workflow: CompiledWorkflow;
  /** One complete, validated deployment record (ADR 0064 merge rules). */
  bootstrap: DeploymentRecord;
  /** Mock endpoints with their response bodies, in file order. */
  endpoints: MockEndpoint[];
  /** Requests to send to the deployment's HTTP triggers, in order (`makeTheseCalls`). */
  calls: CallSpec[];
  /** Fixed clock for the engine (`now()`), in ms since the epoch, when the test sets one. */
  timestampOverride: number | undefined;
  /** How long to wait for the triggered work (`secondsToWaitForCompletion`, default 10). */
  waitSeconds: number;
  /**
   * Config variables overridden by the test's: the deployment's variable source (`AGENT_STRING_SECRETKEYS`). The
   * environment is not in it: it only fills `${NAME}` in the bootstrap.
   */
  variables: Record<string, string>;
  /** Ids of http hosts whose base URL is not the mock: calls to them will be refused (S156). */
  unmockedHosts: string[];
  /** The config's `debug`. */
  debug: boolean;
  /** The normalised test file, for expectations. */
  spec: TestSpec;
  /**
   * Where `allowFileAccess[].directoryOrFile` paths start (the test directory) and the directory they must stay
   * inside (the test root, S155).
   */
  fileDirs?: { baseDir: string; root: string };
}

function display(config: RunnerConfig, abs: string): string {
  return relative(config.projectRoot, abs).split(sep).join('/');
}

/**
 * Reads and validates one test file (inside its test directory: a test file that is a link leading out is
 * refused). The returned root is `fileRoot` when configured, else the test directory (S155).
 *
 * @throws TestRunnerError `TESTRUNNER_FILE_NOT_FOUND`, `TESTRUNNER_FILE_TOO_LARGE`, `TESTRUNNER_PATH_OUTSIDE_ROOT`,
 *   `TESTRUNNER_JSON_INVALID`, `TESTRUNNER_TEST_INVALID`.
 */
export function loadTest(config: RunnerConfig, test: DiscoveredTest): LoadedTest {
  const real = realDirectory(test.testDir, 'test directory');
  const testDirRoot = { base: test.testDir, dir: test.testDir, real };
  const { bytes } = readConfinedFile(testDirRoot, test.file, MAX_JSON_FILE_BYTES, test.name);
  const spec = parseTestFile(bytes, test.name);
  const rootDir = config.fileRoot ?? test.testDir;
  const root =
    rootDir === test.testDir
      ? testDirRoot
      : { base: test.testDir, dir: rootDir, real: realDirectory(rootDir, 'fileRoot') };
  return { test, spec, root };
}

/** A deployment id derived from the test name: letters, digits, `-` and `_` only. */
export function testDeploymentId(name: string): string {
  const stem = name
    .replace(/\.test\.json$/, '')
    .replace(/[^A-Za-z0-9_-]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return `test-${stem.slice(0, 96) || 'unnamed'}`;
}

type Reader = (path: string, what: string, max: number) => { bytes: Uint8Array; realPath: string };

/** The test's `fromDirectory`, and a reader of the files it names, confined to the test's root (S155). */
function filesOf(config: RunnerConfig, loaded: LoadedTest): { fromDir: string; read: Reader } {
  const { test, spec, root } = loaded;
  const fromDir = resolveFromDirectory(root, test.file, spec.fromDirectory);
  const read: Reader = (path, what, max) => {
    const abs = resolveTestFile(root, fromDir, path, what);
    return readConfinedFile(root, abs, max, `${what} ${display(config, abs)}`);
  };
  return { fromDir, read };
}

/** Options of {@link prepareTest}. */
export interface PrepareTestOptions {
  /**
   * The environment `${NAME}` in the test bootstrap reads, below the config's and the test's `variables` (as on the
   * agent, where the test's bootstrap is read). Default: none.
   */
  environment?: Readonly<Record<string, string | undefined>> | undefined;
}

/** The test's bootstrap, completed (ADR 0064), and the config's and test's variables. */
function completeBootstrap(
  config: RunnerConfig,
  loaded: LoadedTest,
  read: Reader,
  options: PrepareTestOptions,
): { bootstrap: DeploymentRecord; variables: Record<string, string> } {
  const { test, spec } = loaded;
  const partial =
    spec.useThisTestBootstrapFile === undefined
      ? undefined
      : readJson(
          read(spec.useThisTestBootstrapFile, 'useThisTestBootstrapFile', MAX_JSON_FILE_BYTES).bytes,
          spec.useThisTestBootstrapFile,
        );
  const variables = plainObject([...Object.entries(config.variables), ...Object.entries(spec.variables)]);
  const bootstrap = mergeTestBootstrap({
    file: spec.useThisTestBootstrapFile ?? test.name,
    partial,
    deploymentId: testDeploymentId(test.name),
    remoteConfiguration: `test:${test.name}`,
    data: spec.data,
    variables,
    ...(options.environment === undefined ? {} : { environment: options.environment }),
  });
  return { bootstrap, variables };
}

/**
 * Prepares a loaded test for a deployer: resolves and reads every file it names inside its root (S155), builds
 * and compiles the workflow, completes the bootstrap (ADR 0064) and loads the mock bodies.
 *
 * @throws TestRunnerError `TESTRUNNER_PATH_INVALID`, `TESTRUNNER_PATH_OUTSIDE_ROOT`, `TESTRUNNER_FILE_NOT_FOUND`,
 *   `TESTRUNNER_FILE_TOO_LARGE`, `TESTRUNNER_JSON_INVALID`, `TESTRUNNER_WORKFLOW_INVALID`,
 *   `TESTRUNNER_BOOTSTRAP_INVALID`, `TESTRUNNER_TEST_INVALID` — as a rejected promise.
 */
export async function prepareTest(
  config: RunnerConfig,
  loaded: LoadedTest,
  options: PrepareTestOptions = {},
): Promise<PreparedTest> {
  const { test, spec, root } = loaded;
  const { fromDir, read } = filesOf(config, loaded);
  let workflowFile: { bytes: Uint8Array; dir: string; name: string } | undefined;
  if (spec.useThisTestConfigFile !== undefined) {
    const f = read(spec.useThisTestConfigFile, 'useThisTestConfigFile', MAX_JSON_FILE_BYTES);
    workflowFile = { bytes: f.bytes, dir: dirname(f.realPath), name: basename(f.realPath) };
  }
  const endpoints = spec.mockEndpointResponses.map((m) => ({
    ...m,
    body:
      m.returnThisFile !== undefined
        ? read(m.returnThisFile, 'returnThisFile', MAX_MOCK_FILE_BYTES).bytes
        : new TextEncoder().encode(m.returnThisBody ?? ''),
  }));
  const workflow = await buildTestWorkflow({
    test: test.name,
    ...(workflowFile === undefined ? {} : { workflow: workflowFile }),
    ...(spec.manifest === undefined ? {} : { manifest: spec.manifest }),
    includeDir: fromDir,
    resourceDirs: config.resourceDirs,
  });
  const { bootstrap, variables } = completeBootstrap(config, loaded, read, options);
  return {
    name: test.name,
    deploymentId: bootstrap.deploymentId,
    stepId: spec.testThisStep,
    workflow,
    bootstrap,
    endpoints,
    calls: spec.makeTheseCalls,
    timestampOverride: spec.timestampOverride,
    waitSeconds: spec.secondsToWaitForCompletion,
    variables,
    unmockedHosts: unmockedHostsOf(bootstrap).map((h) => h.id),
    debug: config.debug,
    spec,
    fileDirs: { baseDir: root.base, root: root.dir },
  };
}

/** A declared http host whose base URL is not the mock: every call to it is answered as a refused connection. */
export interface UnmockedHost {
  /** The host's id in `allowExternalHostAccess`. */
  id: string;
  /** Scheme, host and port of its base URL (no user information, path or query), or `(not a URL)`. */
  origin: string;
}

function unmockedHostsOf(record: DeploymentRecord): UnmockedHost[] {
  const out: UnmockedHost[] = [];
  for (const h of record.allowExternalHostAccess ?? []) {
    if (h.transport === 'inProc') continue;
    let url: URL | undefined;
    try {
      url = new URL(h.host ?? '');
    } catch {
      url = undefined;
    }
    if (url === undefined || !isMockUrl(url)) out.push({ id: h.id, origin: url?.origin ?? '(not a URL)' });
  }
  return out;
}

/**
 * The unmocked hosts of a loaded test, from its completed bootstrap alone (the workflow is not built), so they can
 * be named before the run. A test whose bootstrap cannot be completed has none here: preparing it fails the test.
 */
export function findUnmockedHosts(
  config: RunnerConfig,
  loaded: LoadedTest,
  options: PrepareTestOptions = {},
): UnmockedHost[] {
  try {
    const { read } = filesOf(config, loaded);
    return unmockedHostsOf(completeBootstrap(config, loaded, read, options).bootstrap);
  } catch {
    return [];
  }
}
