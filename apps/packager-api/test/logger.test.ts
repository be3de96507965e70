import { describe, expect, it } from 'vitest';
import { createBatchingSink, createLogger } from '../src/logger.js';

describe('createLogger', () => {
  it('writes one JSON object per line with ts, level, msg and the fields', () => {
    const lines: string[] = [];
    createLogger(
      (l) => lines.push(l),
      () => new Date(0),
    ).info('request', { reqId: 'r', status: 200 });
    expect(lines).toEqual([
      '{"ts":"1970-01-01T00:00:00.000Z","level":"info","msg":"request","reqId":"r","status":200}\n',
    ]);
  });

  it('writes exactly what JSON.stringify({ ts, level, msg, ...fields }) writes, for every kind of fields', () => {
    const cases: (Record<string, unknown> | undefined)[] = [
      undefined,
      {},
      { reqId: 'r', code: undefined, n: 1.5, q: 'a"\\\u2028é', nested: { a: [1, null] } },
      { msg: 'overrides', level: 'x', ts: 'y', a: 1 }, // the merged object's own order and values
      { '1': 'integer-like name first', b: 2 },
    ];
    for (const fields of cases) {
      const lines: string[] = [];
      createLogger(
        (l) => lines.push(l),
        () => new Date(0),
      ).warn('m "q"', fields as never);
      const ts = '1970-01-01T00:00:00.000Z';
      expect(lines).toEqual([JSON.stringify({ ts, level: 'warn', msg: 'm "q"', ...fields }) + '\n']);
    }
  });
});

describe('createBatchingSink', () => {
  it('writes the lines of one event-loop turn in one call, and flush() writes pending lines at once', async () => {
    const writes: string[] = [];
    const sink = createBatchingSink((t) => writes.push(t));
    sink('a\n');
    sink('b\n');
    expect(writes).toEqual([]);
    await new Promise((r) => setImmediate(r));
    expect(writes).toEqual(['a\nb\n']);
    sink('c\n');
    sink.flush();
    expect(writes).toEqual(['a\nb\n', 'c\n']);
  });
});
