import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { basename, isAbsolute, resolve } from 'node:path';
import type { DeploymentRecord } from '@org/workflow-compiler';
import { AgentError } from '../errors.js';

/** A zip named by an `allowFileAccess` entry, open for reading. */
export interface AssetFile {
  readonly path: string;
  readonly handle: FileHandle;
  readonly size: number;
}

const isTrue = (v: unknown) => v === true || v === 'true';

function unreadable(where: string, reason: string, cause?: unknown): AgentError {
  return new AgentError('AGENT_ASSET_UNREADABLE', `${where}: ${reason}`, { cause });
}

/** The entry's `patterns` (when present) must match the zip's file name, whole, as for any file of the entry. */
function allowedByPatterns(patterns: readonly string[] | undefined, path: string): boolean {
  if (patterns === undefined || patterns.length === 0) return true;
  const name = basename(path);
  return patterns.some((p) => {
    try {
      return new RegExp(`^(?:${p})$`).test(name);
    } catch {
      return false; // a pattern that is not a regular expression matches nothing
    }
  });
}

const OPEN_ERRORS: Readonly<Record<string, string>> = {
  ENOENT: 'does not exist',
  ELOOP: 'is a symbolic link',
  EACCES: 'cannot be read (permission denied)',
  EISDIR: 'is a directory, not a zip file',
};

/**
 * Resolves the `allowFileAccess` entry `fileId` of a record (relative `directoryOrFile` against `baseDir`) and
 * opens it read-only with O_NOFOLLOW (and O_NONBLOCK, so a FIFO cannot hang start-up): the last path component
 * must not be a symbolic link, and it must be a regular file. The entry must grant `READ`; its `patterns`, when present, must match the file name.
 * @throws {@link AgentError} `AGENT_ASSET_UNREADABLE` naming the deployment, server, entry and path.
 */
export async function openAssetFile(
  record: DeploymentRecord,
  serverId: string,
  fileId: string,
  baseDir: string,
): Promise<AssetFile> {
  let where = `deployment "${record.deploymentId}", server "${serverId}": allowFileAccess "${fileId}"`;
  const entry = record.allowFileAccess?.find((f) => f.id === fileId);
  if (entry === undefined) throw unreadable(where, 'is not declared');
  if (!isTrue(entry.READ)) throw unreadable(where, 'does not grant READ');
  const path = isAbsolute(entry.directoryOrFile)
    ? entry.directoryOrFile
    : resolve(baseDir, entry.directoryOrFile);
  where += ` (${path})`;
  if (!allowedByPatterns(entry.patterns, path))
    throw unreadable(where, 'its patterns do not match the file name');
  let handle: FileHandle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? '';
    throw unreadable(where, OPEN_ERRORS[code] ?? `cannot be opened (${code || 'error'})`, err);
  }
  const stat = await handle.stat();
  if (!stat.isFile()) {
    await handle.close();
    throw unreadable(where, 'is not a regular file');
  }
  return { path, handle, size: stat.size };
}
