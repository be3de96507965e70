import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TestRunnerError } from '../src/index.js';
import { discoverTests } from '../src/internal.js';
import { config, project } from './fixtures.js';

let cleanup = (): void => undefined;
afterEach(() => cleanup());

describe('discoverTests', () => {
  it('walks every test directory for *.test.json, sorted by project-relative name', () => {
    const p = project({
      'tests/z.test.json': '{}',
      'tests/b/a.test.json': '{}',
      'tests/B.test.json': '{}',
      'tests/notes.json': '{}',
      'tests/x.test.json.bak': '{}',
      'more/m.test.json': '{}',
    });
    cleanup = p.cleanup;
    const found = discoverTests(config(p.root, { testDirs: ['tests', 'more'] }));
    expect(found.map((t) => t.name)).toEqual([
      'more/m.test.json',
      'tests/B.test.json',
      'tests/b/a.test.json',
      'tests/z.test.json',
    ]);
    expect(found[0]?.testDir).toBe(join(p.root, 'more'));
  });

  it('does not follow linked directories', () => {
    const p = project({ 'tests/a.test.json': '{}', 'elsewhere/hidden.test.json': '{}' });
    cleanup = p.cleanup;
    symlinkSync(join(p.root, 'elsewhere'), join(p.root, 'tests/linked'));
    expect(discoverTests(config(p.root)).map((t) => t.name)).toEqual(['tests/a.test.json']);
  });

  it('takes explicit files, which must be inside a test directory', () => {
    const p = project({ 'tests/a.test.json': '{}', 'tests/b.test.json': '{}', 'other/c.test.json': '{}' });
    cleanup = p.cleanup;
    const c = config(p.root);
    expect(discoverTests(c, [join(p.root, 'tests/b.test.json')]).map((t) => t.name)).toEqual([
      'tests/b.test.json',
    ]);
    expect(() => discoverTests(c, ['other/c.test.json'])).toThrowCode(
      TestRunnerError,
      'TESTRUNNER_PATH_OUTSIDE_ROOT',
    );
    expect(() => discoverTests(c, ['tests/../other/c.test.json'])).toThrowCode(
      TestRunnerError,
      'TESTRUNNER_PATH_OUTSIDE_ROOT',
    );
  });

  it('fails with TESTRUNNER_FILE_NOT_FOUND for a missing test directory', () => {
    const p = project({});
    cleanup = p.cleanup;
    mkdirSync(join(p.root, 'resources'));
    expect(() => discoverTests(config(p.root))).toThrowCode(TestRunnerError, 'TESTRUNNER_FILE_NOT_FOUND');
  });
});
