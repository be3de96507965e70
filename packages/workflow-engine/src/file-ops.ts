import { EngineError } from './errors.js';
import { badArgument, integerArg, stringArg } from './host-args.js';
import type { RunContext } from './run-context.js';

/** One entry of `files(id).list(path)` (SPEC.md §7.5). */
export interface FileEntry {
  name: string;
  type: 'file' | 'directory';
  /** Size in bytes (0 for a directory). */
  bytes: number;
  /** Last modification, epoch milliseconds. */
  modified: number;
}

/**
 * `context.files(id)` on the host side (SPEC.md §7.5), implemented by the app: every permission check, the
 * confinement to the entry's directory and every size cap are the app's. `id` names an `allowFileAccess` entry of
 * the deployment, paths are what the script passed (checked for type and length only). A refusal is a coded
 * error whose message contains `Not permitted`.
 */
export interface FileHost {
  /** The whole file as UTF-8 text. */
  read(id: string, path: string): Promise<string>;
  /**
   * Replaces the file with `data` (`offset` undefined), or writes `data` at `offset` of a copy of the file and
   * replaces the file with the copy (`writeBinary` with an offset).
   */
  write(id: string, path: string, data: Uint8Array, offset: number | undefined): Promise<void>;
  /** The entries of a directory (`path` `''`: the entry's own directory). */
  list(id: string, path: string): Promise<FileEntry[]>;
  move(id: string, from: string, to: string): Promise<void>;
  delete(id: string, path: string): Promise<void>;
}

/** Longest `id` and path argument passed on to the host. */
export const MAX_FILE_ID_CHARS = 256;
export const MAX_FILE_PATH_CHARS = 4096;

type Args = unknown[];
type Op = (ctx: RunContext, args: Args, bytes: Uint8Array | undefined) => unknown;

/** docs/interfaces.md §5.7: a refused file call's message contains `FC2` and `Not permitted`. */
function notPermitted(why: string): EngineError {
  return new EngineError('ENGINE_NOT_PERMITTED', `Not permitted (FC2): ${why}`);
}

function text(args: Args, i: number, name: string, max: number): string {
  const v = stringArg(args[i], `files: ${name}`);
  if (v.length > max) throw badArgument(`files: ${name} is longer than ${max} characters`);
  return v;
}

function hostOf(ctx: RunContext): FileHost {
  const files = ctx.shared.host.files;
  if (files === undefined) throw notPermitted('this host grants no file access');
  return files;
}

/** Files outlive the run and ordinary processors can read them: an authentication context only reads (ADR 0054). */
function writer(ctx: RunContext, call: string): FileHost {
  if (ctx.isAuth) throw notPermitted(`files().${call} is read-only in an authentication context`);
  return hostOf(ctx);
}

const id = (a: Args) => text(a, 0, 'id', MAX_FILE_ID_CHARS);
const path = (a: Args, i: number) => text(a, i, 'path', MAX_FILE_PATH_CHARS);

function offsetOf(args: Args): number | undefined {
  const v = args[2];
  return v === null || v === undefined
    ? undefined
    : integerArg(v, 'files: writeBinary off', 0, Number.MAX_SAFE_INTEGER);
}

/** The host calls of `context.files(id)`; the realm side is in `sandbox/realm/prelude.ts`. */
export const FILE_OPS: Record<string, Op> = {
  'files.read': (ctx, a) => hostOf(ctx).read(id(a), path(a, 1)),
  'files.write': (ctx, a) => {
    const data = new TextEncoder().encode(text(a, 2, 'content', Number.MAX_SAFE_INTEGER));
    return writer(ctx, 'write').write(id(a), path(a, 1), data, undefined);
  },
  'files.writeBinary': (ctx, a, bytes) =>
    writer(ctx, 'writeBinary').write(id(a), path(a, 1), bytes ?? new Uint8Array(0), offsetOf(a)),
  'files.list': async (ctx, a) => JSON.stringify(await hostOf(ctx).list(id(a), path(a, 1))),
  'files.move': (ctx, a) => writer(ctx, 'move').move(id(a), path(a, 1), path(a, 2)),
  'files.delete': (ctx, a) => writer(ctx, 'delete').delete(id(a), path(a, 1)),
};
