import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeFiles } from '../src/io.js';
import { filesIn } from './helpers.js';

// writeFiles in process: its failure paths after the command's own checks passed cannot be reached from a
// child process without racing it.
const fresh = () => mkdtempSync(join(tmpdir(), 'oapp-cli-io-'));

describe('writeFiles', () => {
  it('writes every file of the set', async () => {
    const dir = fresh();
    await writeFiles([
      { path: join(dir, 'a'), data: 'one', options: { noClobber: true } },
      { path: join(dir, 'b'), data: new Uint8Array([0x32]), options: {} },
    ]);
    expect(filesIn(dir)).toEqual(['a', 'b']);
    expect(readFileSync(join(dir, 'b'), 'utf8')).toBe('2');
  });

  it('leaves nothing when the second file cannot be staged (CLI_FILE_UNWRITABLE)', async () => {
    const dir = fresh();
    const write = writeFiles([
      { path: join(dir, 'a'), data: 'one', options: { noClobber: true } },
      { path: join(dir, 'missing', 'b'), data: 'two', options: { noClobber: true } },
    ]);
    await expect(write).rejects.toMatchObject({ name: 'CliError', code: 'CLI_FILE_UNWRITABLE' });
    expect(filesIn(dir)).toEqual([]);
  });

  it('removes the files it already moved into place when a later one fails (CLI_OUTPUT_EXISTS)', async () => {
    const dir = fresh();
    // Both staged while the path is free; the second link() then finds the first one's file.
    const path = join(dir, 'a');
    const write = writeFiles([
      { path, data: 'one', options: { noClobber: true } },
      { path, data: 'two', options: { noClobber: true } },
    ]);
    await expect(write).rejects.toMatchObject({ name: 'CliError', code: 'CLI_OUTPUT_EXISTS' });
    expect(filesIn(dir)).toEqual([]);
  });
});
