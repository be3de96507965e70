import { rmSync } from 'node:fs';

// What must be undone when a command ends or the process is interrupted, kept apart from io.ts and keys.ts so
// that main.ts and cli.ts can reach it without loading the libraries those import (start-up time, issue 31).

/** Files and directories to remove if the process is interrupted (SIGINT/SIGTERM) or fails. */
export const pending = new Set<string>();

/** Removes every temporary file still pending (synchronous: runs in signal handlers). */
export function removePending(): void {
  for (const p of pending) rmSync(p, { force: true, recursive: true });
  pending.clear();
}

/** Every secret key read by this process, wiped by {@link wipeLoadedKeys} when the command ends. */
export const loadedKeys: Uint8Array[] = [];

/** Overwrites the bytes of every key this process read. */
export function wipeLoadedKeys(): void {
  for (const b of loadedKeys.splice(0)) b.fill(0);
}
