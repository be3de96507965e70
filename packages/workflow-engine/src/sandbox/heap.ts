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
