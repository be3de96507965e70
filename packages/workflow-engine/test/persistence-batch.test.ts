// The realm's write buffer of setPersistedItem (README "Persistence", ADR 0052): read-your-writes, flush points,
// limits at the call and inside a batch, and what a failed or timed-out run keeps.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createLmdbPersistence,
  createWorkflowEngine,
  EngineError,
  REDACTED,
  type PersistenceProvider,
} from '../src/index.js';
import { EarlyAnswer } from '../src/early-answer.js';
import { MAX_WRITE_BATCH, PERSIST_OPS } from '../src/persist-ops.js';
import type { RunContext } from '../src/run-context.js';
import { fakeHost, input, scriptStep, workflow } from './fake-host.js';
import { tempDataDir } from './persistence-helpers.js';

let dir: string;
let cleanup: () => void;
const providers: PersistenceProvider[] = [];

beforeEach(() => {
  ({ dir, cleanup } = tempDataDir());
});

afterEach(async () => {
  for (const p of providers.splice(0)) await p.close();
  cleanup();
});

async function start(steps: unknown[], limits = {}, engineLimits?: { timeMs?: number }) {
  const persistence = createLmdbPersistence({ dataDir: dir, limits });
  providers.push(persistence);
  const host = Object.assign(fakeHost(), { persistence });
  const engine = await createWorkflowEngine(workflow(steps), { host, data: {}, limits: engineLimits });
  return {
    async run(stepId: string, body?: string) {
      const r = await engine.runStep(stepId, input(body));
      return { body: r.body, errors: r.errors, errored: r.errored };
    },
  };
}

const persisted = (stepId: string, script: string, file = 'shared.store') =>
  scriptStep(stepId, script, { persistenceFile: file });

/** A step that reports n when `k0…k{n-1}` are stored and `kn` is not (a binary search over a stored prefix). */
const prefixReader = persisted(
  'count',
  `const has = (i) => context.getPersistedItem('k' + i) !== null;
   let lo = 0, hi = 1;
   while (has(hi - 1)) hi *= 2;
   while (lo < hi) { const m = (lo + hi) >> 1; if (has(m)) lo = m + 1; else hi = m; }
   context.setBody(String(lo));`,
);

/** Little-endian 32-bit integers, as the realm's Int32Array gives them. */
function le(...ns: number[]): Uint8Array {
  const b = new Uint8Array(4 * ns.length);
  const v = new DataView(b.buffer);
  ns.forEach((n, i) => v.setInt32(4 * i, n, true));
  return b;
}

/** A store 's' and the run context a host op sees for it, as the raw channel reaches it. */
async function rawChannel({ limits = {}, file = 's.store', sealed = false } = {}) {
  const persistence = createLmdbPersistence({ dataDir: dir, limits });
  providers.push(persistence);
  const store = await persistence.open('s', {
    file,
    flush: true,
    hexSymmetricKey: sealed ? 'ab'.repeat(32) : undefined,
    obfuscate: false,
  });
  const ctx = {
    shared: { stores: new Map([['s', store]]) },
    step: { stepId: 's', uid: 's' },
    store,
    isAuth: false,
  } as unknown as RunContext;
  return { store, ctx };
}

describe('the write buffer of setPersistedItem', () => {
  it('reads its own writes within a run, removals included, and keeps them after the run', async () => {
    const agent = await start([
      persisted(
        's',
        `context.setPersistedItem('a', '1'); const a = context.getPersistedItem('a');
         context.setPersistedItem('a', { x: 2 }); const b = context.getPersistedItem('a');
         context.setPersistedItem('gone', 'x'); context.setPersistedItem('gone', null);
         context.setBody([a, b, context.getPersistedItem('gone'), context.getPersistedItem('never')].join('|'));`,
      ),
      persisted(
        'r',
        "context.setBody(context.getPersistedItem('a') + '|' + context.getPersistedItem('gone'))",
      ),
    ]);
    expect((await agent.run('s')).body).toBe('1|{"x":2}||');
    expect((await agent.run('r')).body).toBe('{"x":2}|null');
  });

  it('is flushed before sendToStep: the callee sees the value', async () => {
    const agent = await start([
      persisted(
        'caller',
        "context.setPersistedItem('k', 'from caller'); context.setBody(context.sendToStep('callee', '').getBody())",
      ),
      persisted('callee', "context.setBody(String(context.getPersistedItem('k')))"),
    ]);
    expect((await agent.run('caller')).body).toBe('from caller');
  });

  it('is flushed before other persistence calls, which see the writes in call order', async () => {
    const agent = await start(
      [
        persisted(
          's',
          `context.setPersistedItem('a', 'x'); let code = null;
           try { context.getTimestampManager().set('t', 1); } catch (e) { code = e.code; }
           context.setBody(String(code));`,
        ),
      ],
      { maxEntries: 1 },
    );
    // The buffered item took the one entry, so the timestamp is over the limit.
    expect((await agent.run('s')).body).toBe('ENGINE_PERSISTENCE_LIMIT');
  });

  it(`S130: is flushed at ${MAX_WRITE_BATCH} items; a breach inside the batch is a coded error at that call`, async () => {
    const agent = await start(
      [
        persisted(
          's',
          `let at = -1, code = null;
           for (let i = 0; i < 3000; i++) {
             try { context.setPersistedItem('k' + i, 'v'); } catch (e) { at = i; code = e.code; break; }
           }
           context.setBody(at + ' ' + code);`,
        ),
        prefixReader,
      ],
      { maxEntries: 1500 },
    );
    // The second flush (the 2000th call) breaches: the pairs before the breach are stored, the rest dropped.
    expect(await agent.run('s')).toEqual({
      body: `${2 * MAX_WRITE_BATCH - 1} ENGINE_PERSISTENCE_LIMIT`,
      errors: [],
      errored: false,
    });
    expect((await agent.run('count')).body).toBe('1500');
  });

  it('S130: is flushed at 1 Mi characters of keys and values', async () => {
    const agent = await start(
      [
        persisted(
          's',
          `let at = -1, code = null;
           for (let i = 0; i < 5; i++) {
             try { context.setPersistedItem('k' + i, 'x'.repeat(400000)); } catch (e) { at = i; code = e.code; break; }
           }
           context.setBody(at + ' ' + code);`,
        ),
      ],
      { maxStoreBytes: 1_000_000 },
    );
    // Three values reach the character bound; their flush breaches the store's byte limit at the third call.
    expect((await agent.run('s')).body).toBe('2 ENGINE_PERSISTENCE_LIMIT');
  });

  it('S130: a key or value over its size limit is refused at the call, counted in UTF-8 bytes', async () => {
    const agent = await start(
      [
        persisted(
          's',
          `const seen = [];
           for (const [k, v] of [['k', 'x'.repeat(1025)], ['k', 'é'.repeat(513)], ['k', '😀'.repeat(257)],
               ['k', 'é'.repeat(512)], ['😀'.repeat(17), 'v'], ['kk', '\\ud800'.repeat(342)], ['kk', '\\ud800'.repeat(341)]]) {
             try { context.setPersistedItem(k, v); seen.push('ok'); } catch (e) { seen.push(e.code); }
           }
           context.setBody(seen.join(','));`,
        ),
      ],
      { maxValueBytes: 1024, maxKeyBytes: 64 },
    );
    const L = 'ENGINE_PERSISTENCE_LIMIT';
    expect(await agent.run('s')).toEqual({
      body: [L, L, L, 'ok', L, L, 'ok'].join(','),
      errors: [],
      errored: false,
    });
  });

  it('carries any text through the buffer: NUL, lone surrogates, pairs, U+FFFD, empty keys and values', async () => {
    const texts = ['a\u0000b', '\u0000', 'x\ud800', '\udc00y', '😀\ud83d', '\ufffd', '', 'é\u0001ü', 'plain'];
    const agent = await start([
      persisted(
        'w',
        `const texts = JSON.parse(context.getBody());
         texts.forEach((t, i) => { context.setPersistedItem('k' + i + t, t + '|' + i); context.setPersistedItem(t, 'v' + i); });
         context.setBody(JSON.stringify(texts.map((t, i) => context.getPersistedItem('k' + i + t))));`,
      ),
      persisted(
        'r',
        `const texts = JSON.parse(context.getBody());
         context.setBody(JSON.stringify(texts.map((t, i) => [context.getPersistedItem('k' + i + t), context.getPersistedItem(t)])));`,
      ),
    ]);
    const body = JSON.stringify(texts);
    // Within the run the buffer gives the strings back as written.
    expect(JSON.parse((await agent.run('w', body)).body as string)).toEqual(texts.map((t, i) => `${t}|${i}`));
    // Stored as UTF-8: a lone surrogate becomes U+FFFD (in keys too), everything else is kept exactly.
    const utf8 = (t: string): string => Buffer.from(t, 'utf8').toString('utf8');
    const last = new Map(texts.map((t, i) => [utf8(t), `v${i}`]));
    expect(JSON.parse((await agent.run('r', body)).body as string)).toEqual(
      texts.map((t, i) => [utf8(`${t}|${i}`), last.get(utf8(t))]),
    );
  });

  it('keeps call order across plain strings and converted, null and counted writes, over several batches', async () => {
    // Plain short strings take the buffer's hot path; numbers, objects, null and values long enough to be counted
    // take the other; both fill one buffer, which flushes at 1000 pairs.
    const agent = await start(
      [
        persisted(
          'w',
          `for (let i = 0; i < 2500; i++) {
             const m = i % 5;
             if (m === 0) context.setPersistedItem('k' + i, 'v' + i);
             else if (m === 1) context.setPersistedItem(i, { i });
             else if (m === 2) context.setPersistedItem('k' + i, null);
             else if (m === 3) context.setPersistedItem('k' + i, 'é'.repeat(30) + i);
             else context.setPersistedItem('k' + i, i);
           }
           context.setPersistedItem('k2', 'again');
           context.setBody([0, 1, 2, 3, 4, 2496, 2497].map((i) => context.getPersistedItem((i % 5 === 1 ? '' : 'k') + i)).join('|'));`,
        ),
        persisted(
          'r',
          `context.setBody([0, 1, 2, 3, 4, 7, 2496, 2497].map((i) => context.getPersistedItem((i % 5 === 1 ? '' : 'k') + i)).join('|'));`,
        ),
      ],
      { maxValueBytes: 64, maxKeyBytes: 16 },
    );
    const e = 'é'.repeat(30);
    expect((await agent.run('w')).body).toBe(`v0|{"i":1}|again|${e}3|4|{"i":2496}|`);
    expect((await agent.run('r')).body).toBe(`v0|{"i":1}|again|${e}3|4||{"i":2496}|`);
  });

  it('a breach found at the end of the run errors the run with the code', async () => {
    const agent = await start(
      [persisted('s', "context.setPersistedItem('a', '1'); context.setPersistedItem('b', '2')")],
      {
        maxEntries: 1,
      },
    );
    const r = await agent.run('s');
    expect(r.errored).toBe(true);
    expect(r.errors.some((e) => e.startsWith('ENGINE_PERSISTENCE_LIMIT: '))).toBe(true);
  });

  it('keeps the writes of a run that throws after writing', async () => {
    const agent = await start([
      persisted(
        's',
        "for (let i = 0; i < 10; i++) context.setPersistedItem('k' + i, 'v'); throw new Error('late')",
      ),
      prefixReader,
    ]);
    const r = await agent.run('s');
    expect(r.errored).toBe(true);
    expect(r.errors).toEqual(['resultsProcessor: late']);
    expect((await agent.run('count')).body).toBe('10');
  });

  it('a run that times out mid-loop keeps the writes of the batches flushed before the deadline, not the rest', async () => {
    const agent = await start(
      [persisted('s', "for (let i = 0; ; i++) context.setPersistedItem('k' + i, 'v')"), prefixReader],
      {},
      { timeMs: 300 },
    );
    await expect(agent.run('s')).toThrowCode(EngineError, 'ENGINE_TIMEOUT');
    const stored = Number((await agent.run('count')).body);
    expect(stored % MAX_WRITE_BATCH).toBe(0);
  });
});

describe('persist.setMany (the host side of the buffer)', () => {
  it('re-checks every argument the script could send on the raw channel', async () => {
    const { store, ctx } = await rawChannel();
    const setMany = PERSIST_OPS['persist.setMany']!;
    for (const bad of [
      [],
      ['k'],
      [{ 0: ['k', 'v'], length: 1 }],
      [[['k']]],
      [[['k', 'v', 'x']]],
      [[[1, 'v']]],
      [[['k', 2]]],
      [[['k', { a: 1 }]]],
      [Array.from({ length: MAX_WRITE_BATCH + 1 }, (_, i) => ['k' + i, 'v'])],
    ])
      expect(() => setMany(ctx, bad)).toThrowCode(EngineError, 'ENGINE_BAD_ARGUMENT');
    expect(store.getItem('k')).toBe(null);
    setMany(ctx, [
      [
        ['a', '1'],
        ['b', null],
      ],
    ]);
    expect(store.getItem('a')).toBe('1');
    expect(() => setMany(ctx, [[['k', 'x'.repeat(2 * 1024 * 1024)]]])).toThrowCode(
      EngineError,
      'ENGINE_PERSISTENCE_LIMIT',
    );
    expect(() => setMany({ ...ctx, isAuth: true }, [[['a', '2']]])).toThrowCode(
      EngineError,
      'ENGINE_NOT_PERMITTED',
    );
    expect(store.getItem('a')).toBe('1');
  });

  it("re-checks the write buffer's lengths (bytes) against its text, whatever the raw channel sends", async () => {
    const { store, ctx } = await rawChannel();
    for (const op of ['persist.setMany', 'persist.setLast']) {
      const setMany = PERSIST_OPS[op]!;
      const bad: [Uint8Array | undefined, string][] = [
        [undefined, 'kv'], // text without lengths
        [new Uint8Array([1, 0, 0, 0]), 'k'], // not a multiple of 8 bytes
        [le(1, 1).subarray(0, 7), 'kv'],
        [le(1, 1, 0), 'kv'],
        [le(1, 2), 'kv'], // one character short
        [le(1, 0), 'kv'], // one character left over
        [le(0, 0), 'x'],
        [le(-1, 1), 'kv'], // a key is never null
        [le(1, -2), 'k'],
        [le(3, 0), 'kv'], // longer than the text
        [le(1, 0x7fffffff), 'kv'],
        [le(1, -0x80000000), 'k'],
        [le(2, 1, 1, 0x7ffffffe), 'kkvv'],
        [
          le(...Array.from({ length: MAX_WRITE_BATCH + 1 }, () => [1, 1]).flat()),
          'k'.repeat(2 * MAX_WRITE_BATCH + 2),
        ],
      ];
      for (const [bytes, text] of bad)
        expect(() => setMany(ctx, [], bytes, text)).toThrowCode(EngineError, 'ENGINE_BAD_ARGUMENT');
      expect(() => setMany(ctx, [[['k', 'v']]], le(1, 1, 1), 'kv')).toThrowCode(
        EngineError,
        'ENGINE_BAD_ARGUMENT',
      );
    }
    // None of the malformed batches stored a pair, not even its first ones.
    expect(store.getItem('k')).toBe(null);
    expect(store.getItem('kk')).toBe(null);
    const flush = PERSIST_OPS['persist.setMany']!;
    // An admitted batch is answered first (ADR 0123): the host stores it right after.
    const setMany: typeof flush = (...a) => {
      const r = flush(...a);
      if (r instanceof EarlyAnswer) r.rest();
      return r;
    };
    // A byte offset that is not a multiple of 4, a null value, an empty key, a key with a NUL.
    const lengths = new Uint8Array(1 + 24).subarray(1);
    lengths.set(le(1, 2, 0, -1, 2, 1));
    setMany(ctx, [], lengths, 'a' + '' + 'b\u0000' + '12' + 'x');
    expect([store.getItem('a'), store.getItem(''), store.getItem('b\u0000')]).toEqual(['12', null, 'x']);
    setMany(ctx, [], le(), '');
    expect(() => setMany(ctx, [], le(1, 2 * 1024 * 1024), 'k' + 'x'.repeat(2 * 1024 * 1024))).toThrowCode(
      EngineError,
      'ENGINE_PERSISTENCE_LIMIT',
    );
    expect(() => setMany({ ...ctx, isAuth: true }, [], le(1, 1), 'a2')).toThrowCode(
      EngineError,
      'ENGINE_NOT_PERMITTED',
    );
    expect(store.getItem('a')).toBe('12');
  });
});

describe('a flush answered first (ADR 0123)', () => {
  /** The joined form of `pairs`, as the realm's write buffer sends it. */
  const joined = (pairs: [string, string | null][]): [Uint8Array, string] => [
    le(...pairs.flatMap(([k, v]) => [k.length, v === null ? -1 : v.length])),
    pairs.map(([k]) => k).join('') + pairs.map(([, v]) => v ?? '').join(''),
  ];

  let files = 0;
  /** A new store each time. */
  async function open(limits = {}, sealed = false) {
    const { store, ctx } = await rawChannel({ limits, sealed, file: `s${++files}.store` });
    return { store, ctx, flush: PERSIST_OPS['persist.setMany']! };
  }

  it('answers at once when the store admits the batch, and stores it when the rest runs', async () => {
    const { store, ctx, flush } = await open();
    const [bytes, text] = joined([
      ['a', '1'],
      ['b', null],
      ['c', '3'],
    ]);
    const r = flush(ctx, [], bytes, text);
    expect(r).toBeInstanceOf(EarlyAnswer);
    expect((r as EarlyAnswer).value).toBe(null);
    expect(store.getItem('a')).toBe(null); // not stored before the answer…
    (r as EarlyAnswer).rest();
    expect([store.getItem('a'), store.getItem('b'), store.getItem('c')]).toEqual(['1', null, '3']); // …but after
    await store.settle(true);
    expect([store.getItem('a'), store.getItem('c')]).toEqual(['1', '3']);
  });

  it('S130: stores first, and throws at the call, whenever a pair could breach a limit', async () => {
    // Each case is one below, or at, what a batch of two 1-character pairs needs (2 entries, 2 × 4 bytes).
    const cases: [string, Record<string, number>, [string, string | null][]][] = [
      [
        'the entry limit',
        { maxEntries: 1 },
        [
          ['a', '1'],
          ['b', '2'],
        ],
      ],
      [
        'the byte limit',
        { maxStoreBytes: 7 },
        [
          ['a', '1'],
          ['b', '2'],
        ],
      ],
      [
        'the key limit',
        { maxKeyBytes: 1 },
        [
          ['a', '1'],
          ['bb', '2'],
        ],
      ],
      [
        'the value limit',
        { maxValueBytes: 1 },
        [
          ['a', '1'],
          ['b', '22'],
        ],
      ],
    ];
    for (const [what, limits, pairs] of cases) {
      const { store, ctx, flush } = await open(limits);
      const [bytes, text] = joined(pairs);
      expect(() => flush(ctx, [], bytes, text), what).toThrowCode(EngineError, 'ENGINE_PERSISTENCE_LIMIT');
      expect(store.getItem('a'), what).toBe('1'); // the pairs before the breach are stored, at the call
      await providers.pop()!.close();
    }
    // At the limits exactly, the batch is admitted.
    const { ctx, flush } = await open({ maxEntries: 2, maxStoreBytes: 8, maxKeyBytes: 1, maxValueBytes: 1 });
    expect(
      flush(
        ctx,
        [],
        ...joined([
          ['a', '1'],
          ['b', '2'],
        ]),
      ),
    ).toBeInstanceOf(EarlyAnswer);
  });

  it('stores first where the store cannot vouch: a non-ASCII text, a sealed store', async () => {
    const plain = await open();
    expect(plain.flush(plain.ctx, [], ...joined([['é', '1']]))).toBe(null);
    expect(plain.store.getItem('é')).toBe('1');
    await providers.pop()!.close();
    const sealed = await open({}, true);
    expect(sealed.flush(sealed.ctx, [], ...joined([['a', '1']]))).toBe(null);
    expect(sealed.store.getItem('a')).toBe('1');
  });

  it('fails the run as it ends when the rest fails all the same, with the message scrubbed', async () => {
    const persistence = createLmdbPersistence({ dataDir: dir });
    providers.push(persistence);
    let failing = false;
    const wrapped: PersistenceProvider = {
      async open(stepId, spec) {
        const store = await persistence.open(stepId, spec);
        return Object.assign(Object.create(store) as typeof store, {
          setJoined(lengths: Int32Array, text: string) {
            // only the flush at the bound (the run's last pair goes with its end)
            if (failing && lengths.length === 2 * MAX_WRITE_BATCH)
              throw new EngineError('ENGINE_PERSISTENCE_FAILED', 'disk gone near s3cr3t-token');
            store.setJoined!(lengths, text);
          },
        });
      },
      close: () => persistence.close(),
    };
    const host = Object.assign(fakeHost(), { persistence: wrapped });
    const engine = await createWorkflowEngine(
      workflow([
        persisted(
          's',
          `context.crypto().hmacSha256('s3cr3t-token', 'x'); // makes the text a secret
           for (let i = 0; i < ${MAX_WRITE_BATCH + 1}; i++) context.setPersistedItem('k' + i, 'v');
           context.setBody('went on');`,
        ),
      ]),
      { host, data: {} },
    );
    const ok = await engine.runStep('s', input());
    expect(ok.errored).toBe(false);
    failing = true;
    const r = await engine.runStep('s', input());
    // The script went on past the flush (it had its answer); the run errors as it ends.
    expect(r.body).toBe('went on');
    expect(r.errored).toBe(true);
    expect(r.errors).toContain(`ENGINE_PERSISTENCE_FAILED: disk gone near ${REDACTED}`);
    engine.dispose();
  });
});
