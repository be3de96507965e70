import type { RunnerConfig } from './config-file.js';
import { findUnmockedHosts, type LoadedTest, type PrepareTestOptions } from './prepare.js';

/**
 * A host some tests declare whose base URL is not the mock: every call to it is answered as a refused connection
 * (issue 28, S156), so the workflow's `httpConnectFailedProcessor` runs. Named once per host, before the run.
 */
export interface UnmockedHostWarning {
  kind: 'unmocked-host';
  /** The host's id in `allowExternalHostAccess`. */
  hostId: string;
  /** Scheme, host and port of its base URL (never user information, path or query), or `(not a URL)`. */
  origin: string;
  /** The tests that declare it, by name, in run order. */
  tests: string[];
}

/** A file in a test directory that looks like a test but will not run: its name does not end in `.test.json`. */
export interface MisnamedTestWarning {
  kind: 'misnamed-test';
  /** Path relative to the project root, `/`-separated. */
  file: string;
  /** The member that makes it look like a test: `testThisStep`, or the legacy `testThisRoute`. */
  field: string;
}

/** What the runner tells before the first test starts ({@link RunTestsOptions.onWarning}, `RunSummary.warnings`). */
export type RunWarning = MisnamedTestWarning | UnmockedHostWarning;

/**
 * One warning per unmocked host (same id and origin) across the tests that will run (skipped ones excluded),
 * in order of first use.
 */
export function unmockedHostWarnings(
  config: RunnerConfig,
  loaded: readonly LoadedTest[],
  options: PrepareTestOptions = {},
): UnmockedHostWarning[] {
  const byHost = new Map<string, UnmockedHostWarning>();
  for (const l of loaded) {
    if (l.spec.skip !== undefined) continue;
    for (const h of findUnmockedHosts(config, l, options)) {
      const key = JSON.stringify([h.id, h.origin]);
      const known = byHost.get(key);
      if (known === undefined)
        byHost.set(key, { kind: 'unmocked-host', hostId: h.id, origin: h.origin, tests: [l.test.name] });
      else if (!known.tests.includes(l.test.name)) known.tests.push(l.test.name);
    }
  }
  return [...byHost.values()];
}
