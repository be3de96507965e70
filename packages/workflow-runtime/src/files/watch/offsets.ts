import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseStrictJson } from '@org/workflow-compiler';

/** The delivered offset of one followed file, by identity (device and inode, as decimal strings). */
export interface FileOffset {
  readonly dev: string;
  readonly ino: string;
  /** The name it had when last read (for people; identity is dev + ino). */
  readonly name: string;
  /** Bytes of the file delivered to the step (everything before it was in a run that finished). */
  readonly offset: number;
}

/** Where a watcher keeps its offsets: one small JSON file under the data directory, written atomically. */
export interface OffsetStore {
  load(): FileOffset[];
  save(files: readonly FileOffset[]): void;
}

/** Keeps offsets in memory only (no data directory): a restart reads the files from their start again. */
export function memoryOffsets(): OffsetStore {
  let kept: FileOffset[] = [];
  return {
    load: () => kept,
    save: (files) => {
      kept = [...files];
    },
  };
}

const isOffset = (v: unknown): v is FileOffset => {
  const o = v as Record<string, unknown> | null;
  return (
    typeof o === 'object' &&
    o !== null &&
    typeof o['dev'] === 'string' &&
    typeof o['ino'] === 'string' &&
    typeof o['name'] === 'string' &&
    Number.isSafeInteger(o['offset']) &&
    (o['offset'] as number) >= 0
  );
};

/**
 * `<dataDir>/file-watch/<hash>.json` for one watcher, the hash over deployment id, workflow index and step id (so
 * no id ever becomes a path). An unreadable or malformed file counts as none (the files are read from their start).
 */
export function fileOffsets(
  dataDir: string,
  deploymentId: string,
  workflowIndex: number,
  stepId: string,
): OffsetStore {
  const dir = join(dataDir, 'file-watch');
  const key = createHash('sha256').update(`${deploymentId}\0${workflowIndex}\0${stepId}`).digest('hex');
  const path = join(dir, `${key.slice(0, 32)}.json`);
  return {
    load() {
      try {
        const v = parseStrictJson(readFileSync(path)) as { files?: unknown };
        return Array.isArray(v.files) ? v.files.filter(isOffset) : [];
      } catch {
        return [];
      }
    },
    save(files) {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      const tmp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
      try {
        writeFileSync(tmp, JSON.stringify({ deploymentId, stepId, files }), { mode: 0o600 });
        renameSync(tmp, path);
      } catch (err) {
        rmSync(tmp, { force: true });
        throw err;
      }
    },
  };
}
