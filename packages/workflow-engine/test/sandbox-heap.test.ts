import { describe, expect, it } from 'vitest';
import { asAsync } from '@org/test-utils';
import { input } from './fake-host.js';
import { runJson, scriptEngine } from './engine-script.js';

const MiB = 1024 * 1024;

describe('newArrayBufferChecked', () => {
  it('turns host bytes the sandbox heap cannot hold into a catchable out-of-memory error, not a hang', async () => {
    // Before the check, quickjs-emscripten copied such bytes to address 0 of the wasm heap (its malloc result
    // was never checked): the worker stopped answering and the run ended with ENGINE_TIMEOUT.
    const { engine } = await scriptEngine(
      {
        hoard: `const r = context.getStream(); const keep = []; let error = null;
          try { for (let i = 0; i < 8; i++) keep.push(r.read(4 * 1024 * 1024)); } catch (e) { error = e.name + ': ' + e.message; }
          context.setBody(JSON.stringify({ kept: keep.length, error }));`,
        after: `context.setBody(JSON.stringify(context.getBody()))`,
      },
      { limits: { memoryBytes: 8 * MiB } },
    );
    const chunks = Array.from({ length: 8 }, (_, i) => new Uint8Array(4 * MiB).fill(i));
    const out = (await runJson(engine, 'hoard', input(undefined, { stream: asAsync(chunks) }))) as {
      kept: number;
      error: string;
    };
    expect(out.error).toBe('InternalError: out of memory');
    expect(out.kept).toBeLessThan(8);
    expect(await runJson(engine, 'after', input('still serving'))).toBe('still serving');
    // The same with chunks moved to the worker and written into the heap one by one (a transferable stream).
    const moved = Array.from({ length: 32 }, (_, i) => new Uint8Array(MiB).fill(i));
    const out2 = (await runJson(
      engine,
      'hoard',
      input(undefined, { stream: asAsync(moved), streamTransferable: true }),
    )) as { kept: number; error: string };
    expect(out2.error).toBe('InternalError: out of memory');
    expect(out2.kept).toBeLessThan(8);
    expect(await runJson(engine, 'after', input('still serving'))).toBe('still serving');
    engine.dispose();
  });
});
