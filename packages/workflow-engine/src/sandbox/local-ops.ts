/**
 * Host calls the sandbox worker answers itself, without the main thread (ADR 0075): `bytes().gzip`, `gunzip`,
 * `zip` and `unzip`. They are pure functions of their arguments, so nothing about the engine or the deployment is
 * needed; answering here saves two structured clones of the bytes and keeps the CPU work off the main thread's
 * event loop. Time spent here is the script's time (it is not a wait), and the main thread's watchdog still
 * covers it.
 *
 * The bytes are read straight from the QuickJS heap copy `getArrayBuffer` makes and released once the call is
 * done; results are copied into the realm as new ArrayBuffers. Errors go back as `CODE: message`, like the main
 * thread's.
 */
import type { QuickJSContext, QuickJSHandle } from 'quickjs-emscripten-core';
import { capOf, gunzipBytes, gzipBytes } from '../compress.js';
import { unzipArchive, type ZipEntry } from '../zip-read.js';
import { zipArchive } from '../zip-write.js';
import { newArrayBufferChecked } from './heap.js';
import { badArgument, parseHostArgs } from '../host-args.js';

/** The ops answered here. */
export const LOCAL_OPS: ReadonlySet<string> = new Set([
  'bytes.gzip',
  'bytes.gunzip',
  'bytes.zip',
  'bytes.unzip',
]);

type Result = Uint8Array | ZipEntry[];

/** `zip` arguments: `[name, byteLength]` per entry; the entries' bytes are concatenated in one buffer. */
function splitEntries(spec: unknown, bytes: Uint8Array): ZipEntry[] {
  if (!Array.isArray(spec)) throw badArgument('zip: malformed entry list');
  const out: ZipEntry[] = [];
  let at = 0;
  for (const item of spec as unknown[]) {
    const [name, size] = Array.isArray(item) ? (item as unknown[]) : [];
    if (typeof name !== 'string' || typeof size !== 'number' || !Number.isInteger(size) || size < 0)
      throw badArgument('zip: malformed entry list');
    if (at + size > bytes.length) throw badArgument('zip: malformed entry list');
    out.push({ name, bytes: bytes.subarray(at, at + size) });
    at += size;
  }
  if (at !== bytes.length) throw badArgument('zip: malformed entry list');
  return out;
}

function compute(op: string, args: unknown[], bytes: Uint8Array, limit: number): Result {
  switch (op) {
    case 'bytes.gzip':
      return gzipBytes(bytes, args[0]);
    case 'bytes.gunzip':
      return gunzipBytes(bytes, capOf(args[0], limit, 'gunzip'));
    case 'bytes.zip':
      return zipArchive(splitEntries(args[0], bytes));
    default:
      return unzipArchive(bytes, capOf(args[0], limit, 'unzip'));
  }
}

// zlib's results are Buffers, often slices of Node's shared pool: those are copied out (a Buffer's slice() would
// be a view of the whole pool).
function toArrayBuffer(u8: Uint8Array): ArrayBuffer {
  return u8.byteOffset === 0 && u8.byteLength === u8.buffer.byteLength
    ? (u8.buffer as ArrayBuffer)
    : new Uint8Array(u8).buffer;
}

/** `[{ name, data }]`: the realm wraps each `data` ArrayBuffer in a Uint8Array. */
function entriesHandle(ctx: QuickJSContext, entries: ZipEntry[]): QuickJSHandle {
  const list = ctx.newArray();
  try {
    entries.forEach((e, i) => {
      const data = newArrayBufferChecked(ctx, toArrayBuffer(e.bytes));
      const item = ctx.newObject();
      const name = ctx.newString(e.name);
      ctx.setProp(item, 'name', name);
      ctx.setProp(item, 'data', data);
      ctx.setProp(list, i, item);
      name.dispose();
      data.dispose();
      item.dispose();
    });
  } catch (e) {
    list.dispose();
    throw e;
  }
  return list;
}

function errorText(err: unknown): { name: string; message: string } {
  const e = err as { name?: unknown; code?: unknown; message?: unknown };
  const message = typeof e.message === 'string' ? e.message : String(err);
  if (typeof e.code === 'string' && /^ENGINE_[A-Z_]+$/.test(e.code))
    return { name: 'Error', message: `${e.code}: ${message}` };
  const name =
    e.name === 'RangeError' || e.name === 'TypeError' || e.name === 'InternalError' ? e.name : 'Error';
  return { name, message };
}

/**
 * Answers one local op: a handle to return to the script, or `{ error }` to throw in it. `limit` is the run's
 * memory limit, the most any output may be.
 */
export function runLocalOp(
  ctx: QuickJSContext,
  op: string,
  argsJson: string,
  bytesH: QuickJSHandle | undefined,
  limit: number,
): QuickJSHandle | { error: QuickJSHandle } {
  let result: Result;
  let life: { value: Uint8Array; dispose(): void } | undefined;
  try {
    // getArrayBuffer copies within the wasm heap, and throws when that copy does not fit.
    life = bytesH && ctx.typeof(bytesH) === 'object' ? ctx.getArrayBuffer(bytesH) : undefined;
    result = compute(op, parseHostArgs(argsJson), life ? life.value : new Uint8Array(0), limit);
  } catch (err) {
    return { error: ctx.newError(errorText(err)) };
  } finally {
    // The view into the wasm heap is dropped before anything is allocated there again.
    life?.dispose();
  }
  try {
    return Array.isArray(result)
      ? entriesHandle(ctx, result)
      : newArrayBufferChecked(ctx, toArrayBuffer(result));
  } catch (err) {
    return { error: ctx.newError(errorText(err)) };
  }
}
