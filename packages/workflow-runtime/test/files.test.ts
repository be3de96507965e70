import { execFileSync, spawn } from 'node:child_process';
import {
  existsSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DeploymentRecord } from '@org/workflow-compiler';
import type { FileHost } from '@org/workflow-engine';
import { afterEach, describe, expect, it } from 'vitest';
import { compileFileAccess } from '../src/files/access.js';
import { createFileHost } from '../src/files/file-host.js';
import { DEFAULT_FILE_LIMITS } from '../src/files/limits.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A temp tree: `outside/secret.txt` beside `box/` (the entry's directory) with `box/a.txt`. */
function tree() {
  const root = mkdtempSync(join(tmpdir(), 'files-'));
  dirs.push(root);
  mkdirSync(join(root, 'outside'));
  writeFileSync(join(root, 'outside', 'secret.txt'), 'SECRET');
  mkdirSync(join(root, 'box', 'sub'), { recursive: true });
  writeFileSync(join(root, 'box', 'a.txt'), 'alpha');
  writeFileSync(join(root, 'box', 'sub', 'b.log'), 'beta');
  return { root, box: join(root, 'box') };
}

type Entry = Record<string, unknown>;

function hostFor(root: string, entries: Entry[], limits = DEFAULT_FILE_LIMITS): FileHost {
  const record = {
    deploymentId: 'd1',
    remoteConfiguration: 'x',
    allowFileAccess: entries,
  } as unknown as DeploymentRecord;
  return createFileHost(compileFileAccess(record, { baseDir: root }), limits);
}

const ALL = { READ: true, LIST: true, WRITE: 'true', DELETE: true };

async function codeOf(p: Promise<unknown>): Promise<string> {
  return p.then(
    () => 'ok',
    (e: unknown) => {
      const err = e as { code: string; message: string };
      if (err.code === 'AGENT_FILE_NOT_PERMITTED') expect(err.message).toContain('Not permitted (FC2)');
      return err.code;
    },
  );
}

describe('files(id) confinement', () => {
  it('reads, writes, lists, moves and deletes inside the entry (relative directoryOrFile from the base)', async () => {
    const { root, box } = tree();
    const files = hostFor(root, [{ id: 'box', directoryOrFile: 'box', ...ALL }]);
    expect(await files.read('box', 'a.txt')).toBe('alpha');
    expect(await files.read('box', 'sub/b.log')).toBe('beta');
    await files.write('box', 'c.txt', new TextEncoder().encode('γ'), undefined);
    expect(readFileSync(join(box, 'c.txt'), 'utf8')).toBe('γ');
    await files.write('box', 'c.txt', new Uint8Array([33, 33]), 1);
    expect(readFileSync(join(box, 'c.txt'), 'latin1')).toBe('\u00ce!!');
    const list = await files.list('box', '');
    expect(list.map((e) => [e.name, e.type, e.bytes])).toEqual([
      ['a.txt', 'file', 5],
      ['c.txt', 'file', 3],
      ['sub', 'directory', 0],
    ]);
    expect(typeof list[0]!.modified).toBe('number');
    await files.move('box', 'c.txt', 'sub/d.txt');
    expect(readFileSync(join(box, 'sub', 'd.txt')).length).toBe(3);
    await files.delete('box', 'sub/d.txt');
    expect(existsSync(join(box, 'sub', 'd.txt'))).toBe(false);
    expect(await codeOf(files.read('box', 'missing.txt'))).toBe('AGENT_FILE_NOT_FOUND');
    expect(await codeOf(files.write('box', 'x', new Uint8Array(1), 5))).toBe('AGENT_FILE_FAILED');
  });

  it('S132: traversal, absolute, encoded, NUL, symlinked, FIFO and device names are not permitted; nothing outside is opened', async () => {
    const { root, box } = tree();
    symlinkSync(join(root, 'outside', 'secret.txt'), join(box, 'link.txt'));
    symlinkSync(join(root, 'outside'), join(box, 'linkdir'));
    execFileSync('mkfifo', [join(box, 'fifo')]);
    let device = false;
    try {
      execFileSync('mknod', [join(box, 'null'), 'c', '1', '3'], { stdio: 'ignore' });
      device = true;
    } catch {
      // mknod needs CAP_MKNOD; the FIFO covers special files where it is missing
    }
    const files = hostFor(root, [{ id: 'box', directoryOrFile: 'box', ...ALL }]);
    const names = [
      '../outside/secret.txt',
      '/etc/passwd',
      '%2e%2e/outside/secret.txt',
      'a.txt\u0000',
      'sub/../../outside/secret.txt',
      './a.txt',
      'sub\\..\\a.txt',
      'link.txt',
      'linkdir/secret.txt',
      'fifo',
      ...(device ? ['null'] : []),
    ];
    for (const name of names) {
      expect([name, await codeOf(files.read('box', name))]).toEqual([name, 'AGENT_FILE_NOT_PERMITTED']);
      const write = files.write('box', name, new Uint8Array([1]), undefined);
      expect([name, await codeOf(write)]).toEqual([name, 'AGENT_FILE_NOT_PERMITTED']);
    }
    expect(await codeOf(files.list('box', 'linkdir'))).toBe('AGENT_FILE_NOT_PERMITTED');
    expect(await codeOf(files.delete('box', 'link.txt'))).toBe('AGENT_FILE_NOT_PERMITTED');
    expect(readFileSync(join(root, 'outside', 'secret.txt'), 'utf8')).toBe('SECRET');
    expect(readdirSync(join(root, 'outside'))).toEqual(['secret.txt']);
  });

  // Regression: a name ending in "." or a space opens another file on Windows and SMB (`a.txt.` is `a.txt`).
  it('refuses names ending in "." or a space, even when such a file exists', async () => {
    const { root, box } = tree();
    writeFileSync(join(box, 'dotted.txt.'), 'aliased');
    const files = hostFor(root, [{ id: 'box', directoryOrFile: 'box', ...ALL }]);
    for (const name of ['dotted.txt.', 'a.txt ', 'a.txt..', 'sub./b.log', 'sub /b.log']) {
      expect([name, await codeOf(files.read('box', name))]).toEqual([name, 'AGENT_FILE_NOT_PERMITTED']);
      const write = files.write('box', name, new Uint8Array([1]), undefined);
      expect([name, await codeOf(write)]).toEqual([name, 'AGENT_FILE_NOT_PERMITTED']);
    }
    expect(readdirSync(box).sort()).toEqual(['a.txt', 'dotted.txt.', 'sub']);
  });

  it('S132: a hard link to a file outside is not read', async () => {
    const { root, box } = tree();
    linkSync(join(root, 'outside', 'secret.txt'), join(box, 'hard.txt'));
    const files = hostFor(root, [{ id: 'box', directoryOrFile: 'box', ...ALL }]);
    expect(await codeOf(files.read('box', 'hard.txt'))).toBe('AGENT_FILE_NOT_PERMITTED');
  });

  it('S133: each call needs its flag, and names outside patterns are not permitted', async () => {
    const { root } = tree();
    const files = hostFor(root, [
      { id: 'none', directoryOrFile: 'box' },
      { id: 'logs', directoryOrFile: 'box', ...ALL, patterns: ['.*\\.log', 'sub/.*\\.log'] },
    ]);
    const one = new Uint8Array([1]);
    expect(await codeOf(files.read('none', 'a.txt'))).toBe('AGENT_FILE_NOT_PERMITTED');
    expect(await codeOf(files.write('none', 'n.txt', one, undefined))).toBe('AGENT_FILE_NOT_PERMITTED');
    expect(await codeOf(files.delete('none', 'a.txt'))).toBe('AGENT_FILE_NOT_PERMITTED');
    expect(await codeOf(files.list('none', ''))).toBe('AGENT_FILE_NOT_PERMITTED');
    expect(await codeOf(files.move('none', 'a.txt', 'b.txt'))).toBe('AGENT_FILE_NOT_PERMITTED');
    expect(await codeOf(files.read('nope', 'a.txt'))).toBe('AGENT_FILE_NOT_PERMITTED');
    expect(await codeOf(files.read('logs', 'a.txt'))).toBe('AGENT_FILE_NOT_PERMITTED');
    expect(await codeOf(files.write('logs', 'x.txt', one, undefined))).toBe('AGENT_FILE_NOT_PERMITTED');
    expect(await codeOf(files.move('logs', 'sub/b.log', 'b.txt'))).toBe('AGENT_FILE_NOT_PERMITTED');
    expect(await files.read('logs', 'sub/b.log')).toBe('beta');
    expect((await files.list('logs', '')).map((e) => e.name)).toEqual(['sub']);
    expect((await files.list('logs', 'sub')).map((e) => e.name)).toEqual(['b.log']);
  });

  it('a file entry allows its own name only', async () => {
    const { root } = tree();
    const files = hostFor(root, [{ id: 'one', directoryOrFile: 'box/a.txt', ...ALL }]);
    expect(await files.read('one', '')).toBe('alpha');
    expect(await files.read('one', 'a.txt')).toBe('alpha');
    expect(await codeOf(files.read('one', 'sub/b.log'))).toBe('AGENT_FILE_NOT_PERMITTED');
    expect((await files.list('one', '')).map((e) => e.name)).toEqual(['a.txt']);
  });

  it('S134: a symlink swapped in and out 1,000 times while reading never yields a byte from outside', async () => {
    const { root, box } = tree();
    const secret = join(root, 'outside', 'secret.txt');
    writeFileSync(join(root, 'outside', 'x'), 'SECRET');
    // Another process swaps, as fast as it can: box/swap.txt (a file, then a symlink out) and box/d (a
    // directory holding x, then a symlink to the outside directory holding x).
    const swapper = spawn(
      process.execPath,
      [
        '-e',
        `const fs = require('fs'), p = require('path'); const [box, secret, out] = process.argv.slice(1);
         for (let i = 0; ; i++) {
           fs.writeFileSync(p.join(box, 'f.tmp'), 'inside'); fs.renameSync(p.join(box, 'f.tmp'), p.join(box, 'swap.txt'));
           fs.symlinkSync(secret, p.join(box, 'l.tmp')); fs.renameSync(p.join(box, 'l.tmp'), p.join(box, 'swap.txt'));
           fs.rmSync(p.join(box, 'd'), { recursive: true, force: true }); fs.mkdirSync(p.join(box, 'd'));
           fs.writeFileSync(p.join(box, 'd', 'x.tmp'), 'inside'); fs.renameSync(p.join(box, 'd', 'x.tmp'), p.join(box, 'd', 'x'));
           fs.rmSync(p.join(box, 'd'), { recursive: true, force: true }); fs.symlinkSync(out, p.join(box, 'd'));
           if (i === 0) process.stdout.write('go');
         }`,
        box,
        secret,
        join(root, 'outside'),
      ],
      { stdio: ['ignore', 'pipe', 'ignore'] },
    );
    try {
      await new Promise((resolve) => swapper.stdout.once('data', resolve));
      const files = hostFor(root, [{ id: 'box', directoryOrFile: 'box', ...ALL }]);
      const seen = new Set<string>();
      for (let i = 0; i < 1000; i++) {
        for (const name of ['swap.txt', 'd/x']) {
          const got = await files.read('box', name).then(
            (text) => text,
            (e: { code: string }) => e.code,
          );
          seen.add(got);
        }
      }
      expect(
        [...seen].filter(
          (g) =>
            !['inside', 'AGENT_FILE_NOT_PERMITTED', 'AGENT_FILE_NOT_FOUND', 'AGENT_FILE_FAILED'].includes(g),
        ),
      ).toEqual([]);
      expect(seen.has('SECRET')).toBe(false);
    } finally {
      // The swapper must have stopped before the tree is removed (else rm races its writes: ENOTEMPTY).
      const exited = new Promise((resolve) => swapper.once('exit', resolve));
      swapper.kill();
      await exited;
    }
    // 2,000 reads against a process swapping as fast as it can: a loaded 2-core machine needs more than the
    // default 5 s (a hang guard, not a timing assertion).
  }, 60_000);

  it('S135: a write over the size cap is AGENT_FILE_TOO_LARGE and leaves no file, partial or temporary', async () => {
    const { root, box } = tree();
    const files = hostFor(root, [{ id: 'box', directoryOrFile: 'box', ...ALL }], {
      ...DEFAULT_FILE_LIMITS,
      writeBytes: 1024,
      readBytes: 4,
    });
    const before = readdirSync(box).sort();
    expect(await codeOf(files.write('box', 'big.bin', new Uint8Array(1025), undefined))).toBe(
      'AGENT_FILE_TOO_LARGE',
    );
    expect(await codeOf(files.write('box', 'a.txt', new Uint8Array(1000), 100))).toBe('AGENT_FILE_TOO_LARGE');
    expect(readdirSync(box).sort()).toEqual(before);
    expect(readFileSync(join(box, 'a.txt'), 'utf8')).toBe('alpha');
    expect(await codeOf(files.read('box', 'a.txt'))).toBe('AGENT_FILE_TOO_LARGE');
    await files.write('box', 'ok.bin', new Uint8Array(1024), undefined);
    expect(readdirSync(box).filter((n) => n.endsWith('.tmp'))).toEqual([]);
  });
});

describe('compileFileAccess', () => {
  const record = (entries: Entry[]) =>
    ({
      deploymentId: 'd1',
      remoteConfiguration: 'x',
      allowFileAccess: entries,
    }) as unknown as DeploymentRecord;

  it('refuses a required path that does not exist, at start-up', () => {
    const { root } = tree();
    expect(() =>
      compileFileAccess(record([{ id: 'r', directoryOrFile: 'nope', required: true }]), { baseDir: root }),
    ).toThrowCode('AgentError', 'AGENT_FILE_ACCESS_INVALID');
    expect(
      compileFileAccess(record([{ id: 'r', directoryOrFile: 'nope' }]), { baseDir: root }).get('r')?.path,
    ).toBe(join(root, 'nope'));
  });

  it('S137: refuses catastrophic patterns at deploy time', () => {
    const { root } = tree();
    for (const p of ['(a+)+$', '(a|aa)*b', '(.*a){20}', '.*.*.*x', '(?=a)b', '(a)\\1']) {
      expect(() =>
        compileFileAccess(record([{ id: 'r', directoryOrFile: 'box', patterns: [p] }]), { baseDir: root }),
      ).toThrowCode('AgentError', 'AGENT_FILE_ACCESS_INVALID');
    }
  });

  it('keeps every entry inside the root when one is set (the test runner, S155)', () => {
    const { root, box } = tree();
    symlinkSync(join(root, 'outside'), join(box, 'out'));
    for (const directoryOrFile of ['../outside', '/etc', 'out']) {
      expect(() =>
        compileFileAccess(record([{ id: 'r', directoryOrFile }]), { baseDir: box, root: box }),
      ).toThrowCode('AgentError', 'AGENT_FILE_ACCESS_INVALID');
    }
  });
});
