/**
 * Sandbox-side `context.files(id)` (SPEC.md §7.5): a frozen object whose calls go to the host (`file-ops.ts`),
 * which checks every argument again and decides every permission. Bundled into the prelude.
 */
import type { HostCall } from './types.js';

/** What `files(id)` needs from the prelude: its host call and its byte conversion (`bytes()` buffers, arrays). */
export interface FilesEnv {
  call: HostCall;
  toBytes(x: unknown): Uint8Array;
}

export function createFiles(env: FilesEnv, id: string) {
  const { call } = env;
  const text = (v: unknown): string =>
    v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v);
  return Object.freeze({
    read(path: unknown) {
      return call('files.read', [id, String(path)]);
    },
    write(path: unknown, content: unknown) {
      call('files.write', [id, String(path), text(content)]);
    },
    writeBinary(path: unknown, buf: unknown, off?: unknown) {
      const bytes = env.toBytes(buf).slice();
      call('files.writeBinary', [id, String(path), off === undefined ? null : Number(off)], bytes.buffer);
    },
    list(path?: unknown) {
      return call('files.list', [id, path === undefined || path === null ? '' : String(path)]);
    },
    move(from: unknown, to: unknown) {
      call('files.move', [id, String(from), String(to)]);
    },
    delete(path: unknown) {
      call('files.delete', [id, String(path)]);
    },
  });
}
