import { symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadRunnerConfig, parseRunnerConfig, TestRunnerError } from '../src/index.js';
import { json, project } from './fixtures.js';

const root = '/srv/project';
const parse = (doc: unknown) => parseRunnerConfig(json(doc), { projectRoot: root });

describe('parseRunnerConfig', () => {
  it('reads the example of docs/interfaces.md §7.2 and resolves directories against the project root', () => {
    const c = parse({
      resourceDirs: ['resources'],
      testDirs: ['tests'],
      concurrency: 4,
      stopOnFailure: true,
    });
    expect(c).toMatchObject({
      resourceDirs: ['/srv/project/resources'],
      testDirs: ['/srv/project/tests'],
      concurrency: 4,
      iterations: 1,
      stopOnFailure: true,
      debug: false,
      fileRoot: undefined,
      legacy: [],
    });
  });

  it('accepts the singular forms, variables, debug, iterations and "true" strings', () => {
    const c = parse({
      resourceDir: 'r',
      testDir: 't',
      iterations: 3,
      debug: 'true',
      stopOnFailure: 'false',
      variables: { A: '1' },
    });
    expect(c).toMatchObject({
      resourceDirs: ['/srv/project/r'],
      testDirs: ['/srv/project/t'],
      iterations: 3,
      debug: true,
      stopOnFailure: false,
      variables: { A: '1' },
    });
  });

  it('reports the legacy license field once and otherwise ignores it', () => {
    const c = parse({ license: 'licenses.txt', resourceDirs: ['resources'], testDirs: ['tests'] });
    expect(c.legacy).toEqual([
      {
        field: 'license',
        message: expect.stringContaining('ignored') as string,
        files: ['testrunner.config.json'],
      },
    ]);
  });

  it.each([
    ['both resourceDir and resourceDirs', { resourceDir: 'a', resourceDirs: ['b'], testDir: 't' }],
    ['neither testDir nor testDirs', { resourceDir: 'a' }],
    ['both testDir and testDirs', { resourceDir: 'a', testDir: 't', testDirs: ['u'] }],
    ['an empty testDirs', { resourceDir: 'a', testDirs: [] }],
    ['concurrency 0', { resourceDir: 'a', testDir: 't', concurrency: 0 }],
    ['an unknown field', { resourceDir: 'a', testDir: 't', parallel: true }],
    ['a non-string variable', { resourceDir: 'a', testDir: 't', variables: { A: 1 } }],
  ])('rejects %s with TESTRUNNER_CONFIG_INVALID', (_n, doc) => {
    expect(() => parse(doc)).toThrowCode(TestRunnerError, 'TESTRUNNER_CONFIG_INVALID');
  });

  it.each([
    ['a test dir above the project', { resourceDir: 'r', testDir: '../elsewhere' }],
    ['an absolute resource dir', { resourceDir: '/etc', testDir: 't' }],
    ['a fileRoot above the project', { resourceDir: 'r', testDir: 't', fileRoot: '..' }],
  ])('S155: refuses %s with TESTRUNNER_PATH_OUTSIDE_ROOT', (_n, doc) => {
    expect(() => parse(doc)).toThrowCode(TestRunnerError, 'TESTRUNNER_PATH_OUTSIDE_ROOT');
  });

  it('needs every test directory inside fileRoot', () => {
    expect(parse({ resourceDir: 'r', testDir: 't', fileRoot: '.' }).fileRoot).toBe(root);
    expect(() => parse({ resourceDir: 'r', testDir: 't', fileRoot: 'apps' })).toThrowCode(
      TestRunnerError,
      'TESTRUNNER_CONFIG_INVALID',
    );
  });
});

describe('loadRunnerConfig', () => {
  let cleanup = (): void => undefined;
  afterEach(() => cleanup());

  it('reads the file and takes its directory as the project root', () => {
    const p = project({
      'testrunner.config.json': { resourceDirs: ['resources'], testDirs: ['tests'] },
      'tests/.keep': '',
    });
    cleanup = p.cleanup;
    const c = loadRunnerConfig(join(p.root, 'testrunner.config.json'));
    expect(c.projectRoot).toBe(p.root);
    expect(c.testDirs).toEqual([join(p.root, 'tests')]);
  });

  it('fails with TESTRUNNER_FILE_NOT_FOUND for a missing config or test directory', () => {
    const p = project({ 'testrunner.config.json': { resourceDirs: ['resources'], testDirs: ['tests'] } });
    cleanup = p.cleanup;
    expect(() => loadRunnerConfig(join(p.root, 'nope.json'))).toThrowCode(
      TestRunnerError,
      'TESTRUNNER_FILE_NOT_FOUND',
    );
    expect(() => loadRunnerConfig(join(p.root, 'testrunner.config.json'))).toThrowCode(
      TestRunnerError,
      'TESTRUNNER_FILE_NOT_FOUND',
    );
  });

  it('S155: refuses a test directory that is a symbolic link out of the project', () => {
    const outside = project({ 'x.test.json': '{}' });
    const p = project({ 'testrunner.config.json': { resourceDirs: ['resources'], testDirs: ['tests'] } });
    cleanup = () => (p.cleanup(), outside.cleanup());
    symlinkSync(outside.root, join(p.root, 'tests'));
    expect(() => loadRunnerConfig(join(p.root, 'testrunner.config.json'))).toThrowCode(
      TestRunnerError,
      'TESTRUNNER_PATH_OUTSIDE_ROOT',
    );
  });
});
