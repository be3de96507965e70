/**
 * Copying bytes into a sandbox's heap without writing outside it. quickjs-emscripten 0.32's `newArrayBuffer`
 * copies through a `malloc` whose result it never checks: when the wasm heap cannot hold the bytes it writes them
 * at address 0, over QuickJS's own memory, and the worker hangs until the watchdog ends it. A failed allocation
 * is therefore found first, with a probe of the same size, and becomes the out-of-memory error QuickJS itself
 * throws (the engine ends the run with `ENGINE_MEMORY` and discards the sandbox). Fails closed when the
 * allocator cannot be reached (a library update that moves it shows up as out-of-memory in the tests).
 */
import type { QuickJSContext, QuickJSHandle } from 'quickjs-emscripten-core';

/** The emscripten allocator behind a context (`QuickJSContext.module`, not part of the typed API). */
interface Allocator {
  _malloc(bytes: number): number;
  _free(pointer: number): void;
}

function allocatorOf(ctx: QuickJSContext): Allocator | undefined {
  const m = (ctx as unknown as { module?: Partial<Allocator> }).module;
  return m && typeof m._malloc === 'function' && typeof m._free === 'function' ? (m as Allocator) : undefined;
}

function outOfMemory(): Error {
  const e = new Error('out of memory');
  e.name = 'InternalError';
  return e;
}

/** What `QuickJSContext.newArrayBuffer` itself uses (not part of the typed API). */
interface ContextInternals {
  module: Allocator & { HEAPU8: Uint8Array };
  ffi: { QTS_NewArrayBuffer(ctx: number, buffer: number, length: number): number };
  ctx: { value: number };
  memory: { heapValueHandle(pointer: number): QuickJSHandle };
}

function internalsOf(ctx: QuickJSContext): ContextInternals | undefined {
  const c = ctx as unknown as Partial<ContextInternals>;
  return allocatorOf(ctx) &&
    c.module?.HEAPU8 instanceof Uint8Array &&
    typeof c.ffi?.QTS_NewArrayBuffer === 'function' &&
    typeof c.ctx?.value === 'number' &&
    typeof c.memory?.heapValueHandle === 'function'
    ? (c as ContextInternals)
    : undefined;
}

/**
 * A sandbox ArrayBuffer of the bytes of `parts`, one after the other: what `ctx.newArrayBuffer` does (one
 * allocation in the wasm heap, which the new ArrayBuffer then owns: QuickJS frees it with the ArrayBuffer), with
 * the parts written straight into it instead of first being joined. Without the library's internals, the parts
 * are joined and {@link newArrayBufferChecked} used.
 * @throws an `InternalError: out of memory` when the heap has no room for the bytes.
 */
export function newArrayBufferOfParts(ctx: QuickJSContext, parts: readonly Uint8Array[]): QuickJSHandle {
  let length = 0;
  for (const p of parts) length += p.byteLength;
  const q = internalsOf(ctx);
  if (!q) {
    const joined = new Uint8Array(length);
    let off = 0;
    for (const p of parts) {
      joined.set(p, off);
      off += p.byteLength;
    }
    return newArrayBufferChecked(ctx, joined.buffer);
  }
  const pointer = q.module._malloc(Math.max(1, length));
  if (pointer === 0) throw outOfMemory();
  const heap = q.module.HEAPU8; // read after malloc: growing the memory replaces the view
  let off = pointer;
  for (const p of parts) {
    heap.set(p, off);
    off += p.byteLength;
  }
  return q.memory.heapValueHandle(q.ffi.QTS_NewArrayBuffer(q.ctx.value, pointer, length));
}

/**
 * `ctx.newArrayBuffer(buffer)` once the heap is known to have room for its temporary copy.
 * @throws an `InternalError: out of memory` (thrown into the script by the host function) when it has none.
 */
export function newArrayBufferChecked(ctx: QuickJSContext, buffer: ArrayBuffer): QuickJSHandle {
  const heap = allocatorOf(ctx);
  const probe = heap ? heap._malloc(Math.max(1, buffer.byteLength)) : 0;
  if (probe === 0) throw outOfMemory();
  heap!._free(probe);
  return ctx.newArrayBuffer(buffer);
}
