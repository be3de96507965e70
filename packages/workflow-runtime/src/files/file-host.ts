import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { open, readdir, rename, unlink, type FileHandle } from 'node:fs/promises';
import type { FileEntry, FileHost } from '@org/workflow-engine';
import { AgentError } from '../errors.js';
import { resolveAccess, type FileAccess } from './access.js';
import { lstatChild, openRegular, withDir, type Dir } from './confined.js';
import type { FileLimits } from './limits.js';
import { failed, notFound, notPermitted, pathSegments, tooLarge } from './refusals.js';

const { O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW } = constants;
// File content handed to a script is text, decoded leniently like getBody() (engine SPEC.md §3), not a format.
// eslint-disable-next-line no-restricted-syntax -- see above
const utf8 = new TextDecoder('utf-8');

/** A path of an entry, checked: the directory to start from, the directories below it, the name. */
interface Located {
  readonly base: string;
  readonly parents: readonly string[];
  readonly name: string;
  readonly fileName: string | undefined;
}

type Flag = 'read' | 'list' | 'write' | 'delete';

function entryOf(
  entries: ReadonlyMap<string, FileAccess>,
  id: string,
  flags: Flag[],
  what: string,
): FileAccess {
  const a = entries.get(id);
  if (a === undefined) throw notPermitted(what, 'no allowFileAccess entry has this id');
  for (const f of flags) if (!a[f]) throw notPermitted(what, `the entry does not grant ${f.toUpperCase()}`);
  return a;
}

const matches = (a: FileAccess, rel: string): boolean =>
  a.patterns.length === 0 || a.patterns.some((re) => re.test(rel));

/** Checks a script's path against the entry: its rules (S132), the entry's one file, the patterns (S133). */
function locate(a: FileAccess, path: string, what: string): Located {
  let segments = pathSegments(path, what, true);
  const now = resolveAccess(a);
  if (now === undefined) throw notFound(what);
  if (now.fileName !== undefined) {
    if (segments.length === 0) segments = [now.fileName];
    if (segments.length !== 1 || segments[0] !== now.fileName) throw notPermitted(what, 'outside the entry');
  }
  if (segments.length === 0) throw notPermitted(what, 'an empty path');
  if (!matches(a, segments.join('/'))) throw notPermitted(what, "not matched by the entry's patterns");
  return { base: now.dir, parents: segments.slice(0, -1), name: segments.at(-1)!, fileName: now.fileName };
}

async function readCapped(fh: FileHandle, size: number, max: number, what: string): Promise<Uint8Array> {
  if (size > max) throw tooLarge(what, `the file is larger than ${max} bytes`);
  const buf = new Uint8Array(Math.min(max, size) + 1);
  let n = 0;
  for (;;) {
    const { bytesRead } = await fh.read(buf, n, buf.length - n, n);
    if (bytesRead === 0) break;
    n += bytesRead;
    if (n === buf.length) throw tooLarge(what, `the file is larger than ${max} bytes`);
  }
  return buf.subarray(0, n);
}

async function readIn(dir: Dir, name: string, max: number, what: string): Promise<Uint8Array> {
  const [fh, st] = await openRegular(dir, name, what);
  try {
    return await readCapped(fh, Number(st.size), max, what);
  } finally {
    await fh.close();
  }
}

/** Writes a new file beside the target and renames it over: no partial file is ever visible (S135). */
async function replaceIn(dir: Dir, name: string, bytes: Uint8Array, what: string): Promise<void> {
  const tmp = `.${randomBytes(8).toString('hex')}.tmp`;
  const tmpPath = `${dir.path}/${tmp}`;
  try {
    const fh = await open(tmpPath, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600);
    try {
      await fh.writeFile(bytes);
    } finally {
      await fh.close();
    }
    await rename(tmpPath, `${dir.path}/${name}`);
  } catch (err) {
    await unlink(tmpPath).catch(() => undefined);
    throw err instanceof AgentError ? err : failed(what, err);
  }
}

async function writeIn(
  dir: Dir,
  name: string,
  data: Uint8Array,
  offset: number | undefined,
  limits: FileLimits,
  what: string,
): Promise<void> {
  const target = await lstatChild(dir, name, what);
  if (target !== undefined && !target.isFile()) throw notPermitted(what, 'not a regular file');
  if (offset === undefined) return replaceIn(dir, name, data, what);
  const old = target === undefined ? new Uint8Array(0) : await readIn(dir, name, limits.writeBytes, what);
  if (offset > old.length)
    throw new AgentError(
      'AGENT_FILE_FAILED',
      `${what}: offset ${offset} is past the end (${old.length} bytes)`,
    );
  const next = new Uint8Array(Math.max(old.length, offset + data.length));
  next.set(old);
  next.set(data, offset);
  return replaceIn(dir, name, next, what);
}

async function listIn(
  dir: Dir,
  a: FileAccess,
  prefix: string,
  max: number,
  what: string,
): Promise<FileEntry[]> {
  const names = await readdir(dir.path).catch((err: unknown) => {
    throw failed(what, err);
  });
  if (names.length > max) throw tooLarge(what, `more than ${max} entries`);
  const out: FileEntry[] = [];
  for (const name of names.sort()) {
    const st = await lstatChild(dir, name, what);
    if (st === undefined) continue;
    const modified = Number(st.mtimeMs);
    if (st.isDirectory()) out.push({ name, type: 'directory', bytes: 0, modified });
    else if (st.isFile() && matches(a, prefix + name))
      out.push({ name, type: 'file', bytes: Number(st.size), modified });
  }
  return out;
}

async function list(a: FileAccess, path: string, limits: FileLimits, what: string): Promise<FileEntry[]> {
  const segments = pathSegments(path, what, true);
  const now = resolveAccess(a);
  if (now === undefined) throw notFound(what);
  if (now.fileName !== undefined) {
    if (segments.length > 1 || (segments.length === 1 && segments[0] !== now.fileName))
      throw notPermitted(what, 'outside the entry');
    const all = await withDir(now.dir, [], what, (d) => listIn(d, a, '', limits.listEntries, what));
    return all.filter((e) => e.name === now.fileName && e.type === 'file');
  }
  const prefix = segments.length === 0 ? '' : `${segments.join('/')}/`;
  return withDir(now.dir, segments, what, (d) => listIn(d, a, prefix, limits.listEntries, what));
}

async function move(a: FileAccess, from: string, to: string, what: string): Promise<void> {
  const src = locate(a, from, what);
  const dst = locate(a, to, what);
  await withDir(src.base, src.parents, what, (srcDir) =>
    withDir(dst.base, dst.parents, what, async (dstDir) => {
      const st = await lstatChild(srcDir, src.name, what);
      if (st === undefined) throw notFound(what);
      if (!st.isFile()) throw notPermitted(what, 'not a regular file');
      const t = await lstatChild(dstDir, dst.name, what);
      if (t !== undefined && !t.isFile()) throw notPermitted(what, 'the target is not a regular file');
      await rename(`${srcDir.path}/${src.name}`, `${dstDir.path}/${dst.name}`).catch((err: unknown) => {
        throw failed(what, err);
      });
    }),
  );
}

async function remove(a: FileAccess, path: string, what: string): Promise<void> {
  const at = locate(a, path, what);
  await withDir(at.base, at.parents, what, async (dir) => {
    const st = await lstatChild(dir, at.name, what);
    if (st === undefined) throw notFound(what);
    if (!st.isFile()) throw notPermitted(what, 'not a regular file');
    await unlink(`${dir.path}/${at.name}`).catch((err: unknown) => {
      throw failed(what, err);
    });
  });
}

const describe = (id: string, call: string, path: string): string =>
  `files(${JSON.stringify(id.slice(0, 100))}).${call} ${JSON.stringify(path.slice(0, 200))}`;

/**
 * The runtime's `context.files(id)` for one deployment (engine SPEC.md §7.5): each call needs its flag on the
 * entry (`read` READ, `list` LIST, `write`/`writeBinary` WRITE, `delete` DELETE, `move` WRITE and DELETE), a path
 * that passes {@link pathSegments} and the entry's patterns, and stays below the entry's directory (confined.ts).
 * @throws AgentError (as rejected promises) `AGENT_FILE_NOT_PERMITTED`, `AGENT_FILE_NOT_FOUND`,
 *   `AGENT_FILE_TOO_LARGE`, `AGENT_FILE_FAILED`.
 */
export function createFileHost(entries: ReadonlyMap<string, FileAccess>, limits: FileLimits): FileHost {
  return {
    async read(id, path) {
      const what = describe(id, 'read', path);
      const at = locate(entryOf(entries, id, ['read'], what), path, what);
      const bytes = await withDir(at.base, at.parents, what, (d) =>
        readIn(d, at.name, limits.readBytes, what),
      );
      return utf8.decode(bytes);
    },
    async write(id, path, data, offset) {
      const what = describe(id, offset === undefined ? 'write' : 'writeBinary', path);
      const a = entryOf(entries, id, ['write'], what);
      if ((offset ?? 0) + data.byteLength > limits.writeBytes)
        throw tooLarge(what, `the file would be larger than ${limits.writeBytes} bytes`);
      const at = locate(a, path, what);
      await withDir(at.base, at.parents, what, (d) => writeIn(d, at.name, data, offset, limits, what));
    },
    async list(id, path) {
      const what = describe(id, 'list', path);
      return list(entryOf(entries, id, ['list'], what), path, limits, what);
    },
    async move(id, from, to) {
      const what = `${describe(id, 'move', from)} to ${JSON.stringify(to.slice(0, 200))}`;
      return move(entryOf(entries, id, ['write', 'delete'], what), from, to, what);
    },
    async delete(id, path) {
      const what = describe(id, 'delete', path);
      return remove(entryOf(entries, id, ['delete'], what), path, what);
    },
  };
}
