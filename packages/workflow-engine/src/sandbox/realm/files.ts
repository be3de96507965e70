/**
 * Sandbox-side `context.files(id)` (SPEC.md §7.5): a frozen object whose calls go to the host (`file-ops.ts`),
 * which checks every argument again and decides every permission. Bundled into the prelude.
 */
import { integerArg, jsonText, textArg } from './args.js';
import type { HostCall } from './types.js';

/** What `files(id)` needs from the prelude: its host call and its byte conversion (`bytes()` buffers, arrays). */
export interface FilesEnv {
  call: HostCall;
  toBytes(x: unknown, what: string): Uint8Array;
}

export function createFiles(env: FilesEnv, id: string) {
  const { call } = env;
  const path = (v: unknown, call: string, name = 'path'): string => textArg(v, 'files: ' + call + ' ' + name);
  return Object.freeze({
    read(p: unknown) {
      return call('files.read', [id, path(p, 'read')]);
    },
    write(p: unknown, content: unknown) {
      call('files.write', [id, path(p, 'write'), jsonText(content, 'files: write content') ?? '']);
    },
    writeBinary(p: unknown, buf: unknown, off?: unknown) {
      const at = off === undefined ? null : integerArg(off, 'files: writeBinary off', 0);
      const bytes = env.toBytes(buf, 'files: writeBinary buf').slice();
      call('files.writeBinary', [id, path(p, 'writeBinary'), at], bytes.buffer);
    },
    list(p?: unknown) {
      return call('files.list', [id, p === undefined || p === null ? '' : path(p, 'list')]);
    },
    move(from: unknown, to: unknown) {
      call('files.move', [id, path(from, 'move', 'from'), path(to, 'move', 'to')]);
    },
    delete(p: unknown) {
      call('files.delete', [id, path(p, 'delete')]);
    },
  });
}
