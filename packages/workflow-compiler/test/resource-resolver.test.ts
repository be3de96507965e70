import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { WorkflowError } from '../src/index.js';
import { prepareRoots, resolveFile, type ResolvedFile } from '../src/resource-resolver.js';
import { scratch } from './fixtures.js';

const s = scratch({
  'one/a/x.js': 'one-x',
  'one/shared.js': 'from one',
  'two/shared.js': 'from two',
  'two/only-two.js': 'two only',
  'two/dir-in-two/inner.js': 'inner',
  'one/dir-in-two': '',
  'outside/secret.txt': 'do not read',
  'outside/dir/s.js': 'outside dir',
  'one/big.js': 'x'.repeat(101),
  'one/dotted.js.': 'a name that aliases dotted.js on Windows',
  'one/spaced.js ': 'a name that aliases spaced.js on Windows',
});
const one = join(s.root, 'one');
const two = join(s.root, 'two');
symlinkSync(join(s.root, 'outside/secret.txt'), join(one, 'link-file.js'));
symlinkSync(join(s.root, 'outside/dir'), join(one, 'link-dir'));
symlinkSync(join(one, 'a/x.js'), join(one, 'inside-link.js'));
symlinkSync('../outside/secret.txt', join(two, 'relative-link.js'));
symlinkSync(join(s.root, 'nowhere'), join(one, 'dangling.js'));
mkdirSync(join(s.root, 'one/emptydir'));
afterAll(s.cleanup);

/** Promise wrapper so that the cases read like the async compile tests (an executor's throw rejects). */
function resolve(path: string, dirs = [one, two], max = 100): Promise<ResolvedFile> {
  return new Promise((ok) => ok(resolveFile(path, prepareRoots(dirs), max)));
}
const text = (b: Uint8Array): string => new TextDecoder().decode(b);

describe('resolveFile', () => {
  it('finds a file in nested folders, with or without a leading slash', async () => {
    expect(text((await resolve('/a/x.js')).bytes)).toBe('one-x');
    expect(text((await resolve('a/x.js')).bytes)).toBe('one-x');
  });

  it('takes the first directory that holds the file', async () => {
    const r = await resolve('shared.js');
    expect([r.dir, text(r.bytes)]).toEqual([one, 'from one']);
    const r2 = await resolve('shared.js', [two, one]);
    expect([r2.dir, text(r2.bytes)]).toEqual([two, 'from two']);
    expect((await resolve('only-two.js')).dir).toBe(two);
  });

  // Regression: such names resolved here, and on Windows or SMB they open another file (`dotted.js`).
  it('refuses a name ending in "." or a space even when such a file exists', async () => {
    await expect(resolve('dotted.js.')).rejects.toThrowCode(WorkflowError, 'WORKFLOW_RESOURCE_PATH_INVALID');
    await expect(resolve('/spaced.js ')).rejects.toThrowCode(WorkflowError, 'WORKFLOW_RESOURCE_PATH_INVALID');
  });

  it('skips missing directories in the list', async () => {
    expect((await resolve('only-two.js', [join(s.root, 'missing'), two])).dir).toBe(two);
  });

  it('does not count a directory at the path as holding the file', async () => {
    expect(text((await resolve('dir-in-two/inner.js')).bytes)).toBe('inner');
    await expect(resolve('emptydir')).rejects.toThrowCode(WorkflowError, 'WORKFLOW_RESOURCE_NOT_FOUND');
  });

  it('follows a symlink that stays inside the directory', async () => {
    expect(text((await resolve('inside-link.js')).bytes)).toBe('one-x');
  });

  it.each(['link-file.js', 'link-dir/s.js'])(
    'rejects a symlink out of the directory (%s) with WORKFLOW_RESOURCE_OUTSIDE_ROOT (S104)',
    async (p) => {
      await expect(resolve(p)).rejects.toThrowCode(WorkflowError, 'WORKFLOW_RESOURCE_OUTSIDE_ROOT');
    },
  );

  it('rejects a relative symlink out of the directory (S104)', async () => {
    await expect(resolve('relative-link.js')).rejects.toThrowCode(
      WorkflowError,
      'WORKFLOW_RESOURCE_OUTSIDE_ROOT',
    );
  });

  it('fails closed: an escaping symlink in the first directory is an error even if a later one holds the path', async () => {
    writeFileSync(join(two, 'link-file.js'), 'benign');
    await expect(resolve('link-file.js')).rejects.toThrowCode(
      WorkflowError,
      'WORKFLOW_RESOURCE_OUTSIDE_ROOT',
    );
  });

  it('treats a dangling symlink as absent', async () => {
    await expect(resolve('dangling.js')).rejects.toThrowCode(WorkflowError, 'WORKFLOW_RESOURCE_NOT_FOUND');
  });

  it('names the path and every directory searched when nothing holds the file', async () => {
    const missing = join(s.root, 'missing');
    await expect(resolve('/no/such.js', [one, missing, two])).rejects.toThrowCode(
      WorkflowError,
      'WORKFLOW_RESOURCE_NOT_FOUND',
    );
    await expect(resolve('/no/such.js', [one, missing, two])).rejects.toThrow(
      `"/no/such.js" was not found in any of: ${one}, ${missing}, ${two}`,
    );
  });

  it('rejects a file over the size cap with WORKFLOW_RESOURCE_TOO_LARGE, and accepts one at the cap', async () => {
    await expect(resolve('big.js', [one], 100)).rejects.toThrowCode(
      WorkflowError,
      'WORKFLOW_RESOURCE_TOO_LARGE',
    );
    expect((await resolve('big.js', [one], 101)).bytes.byteLength).toBe(101);
  });

  it.each([
    '../outside/secret.txt',
    '/../outside/secret.txt',
    'a/../../outside/secret.txt',
    'C:x',
    '\\\\host\\share\\x',
    'a\u0000b',
  ])('rejects %j before touching the file system (S103)', async (p) => {
    await expect(resolve(p)).rejects.toThrowCode(WorkflowError, 'WORKFLOW_RESOURCE_PATH_INVALID');
  });

  it('reads /etc/passwd only as a path inside the resource directories', async () => {
    await expect(resolve('/etc/passwd')).rejects.toThrowCode(WorkflowError, 'WORKFLOW_RESOURCE_NOT_FOUND');
  });

  it('does not block on a FIFO', async () => {
    execFileSync('mkfifo', [join(one, 'pipe.js')]);
    await expect(resolve('pipe.js', [one])).rejects.toThrowCode(WorkflowError, 'WORKFLOW_RESOURCE_NOT_FOUND');
  });
});
