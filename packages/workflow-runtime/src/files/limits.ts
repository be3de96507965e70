const MiB = 1024 * 1024;

/** Caps and timing of file access and file watchers (RuntimeOptions `files`; README "Files"). */
export interface FileLimits {
  /** Largest file `files(id).read` returns. */
  readonly readBytes: number;
  /** Largest file `write` / `writeBinary` produces (offset included). */
  readonly writeBytes: number;
  /** Most entries in a directory `list` reads. */
  readonly listEntries: number;
  /** Whether a file watcher also listens for `fs.watch` change events (false: the poll alone, e.g. on NFS). */
  readonly watchEvents: boolean;
  /** How often a file watcher checks its files when no change event came (the fs.watch fallback). */
  readonly watchPollMs: number;
  /** A pending event (splitAtEnd false) with no new content for this long is delivered. */
  readonly watchIdleFlushMs: number;
  /** Most messages in one step run of a file watcher. */
  readonly batchMessages: number;
  /** Most message characters in one step run of a file watcher. */
  readonly batchChars: number;
  /** Longest message: an event that grows past it with no splitter match is delivered in pieces of this size. */
  readonly eventChars: number;
  /** Most files one file watcher follows at once (more are ignored, with a warning). */
  readonly watchedFiles: number;
}

export const DEFAULT_FILE_LIMITS: FileLimits = {
  readBytes: 4 * MiB,
  writeBytes: 4 * MiB,
  listEntries: 10_000,
  watchEvents: true,
  watchPollMs: 1_000,
  watchIdleFlushMs: 2_000,
  batchMessages: 1_000,
  batchChars: 1 * MiB,
  eventChars: 1 * MiB,
  watchedFiles: 256,
};
