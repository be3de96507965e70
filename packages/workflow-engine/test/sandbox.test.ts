import { availableParallelism } from 'node:os';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_SANDBOX_IDLE_MS,
  EngineError,
  MAX_POOLED_WORKERS,
  MAX_SANDBOX_IDLE_MS,
  MAX_SANDBOX_WORKERS,
  sandboxWorkersStarted,
  setSandboxIdleMs,
  setSandboxWorkers,
} from '../src/index.js';
import { input } from './fake-host.js';
import { ALLOC_24_MIB, PIN_16_MIB, PIN_LIMITS, engineFor } from './sandbox-helpers.js';

async function bodyOf(script: string): Promise<unknown> {
  const engine = await engineFor({ s: script });
  const r = await engine.runStep('s', input());
  expect(r.errors).toEqual([]);
  return r.body;
}

describe('sandbox isolation (S51, S53)', () => {
  it('S51: the Function constructor reaches no process or require', async () => {
    const body = await bodyOf(`
      const F = this.constructor.constructor;
      const p = F('return typeof process')();
      const r = F('return typeof require')();
      const g = Object.getPrototypeOf(async function () {}).constructor;
      context.setBody([p, r, typeof globalThis.process, typeof module, typeof Deno, typeof std, typeof os, typeof scriptArgs, typeof g('return process')].join(','));`);
    expect(body).toBe(
      'undefined,undefined,undefined,undefined,undefined,undefined,undefined,undefined,function',
    );
  });

  it('S53: fetch, XMLHttpRequest, WebSocket, require and timers are not defined', async () => {
    const body = await bodyOf(
      "context.setBody([typeof fetch, typeof XMLHttpRequest, typeof WebSocket, typeof require, typeof setTimeout].join(','))",
    );
    expect(body).toBe('undefined,undefined,undefined,undefined,undefined');
  });

  it('S53: dynamic import() is refused', async () => {
    const body = await bodyOf(
      "import('node:net').then(() => context.setBody('loaded'), (e) => context.setBody('refused'))",
    );
    expect(body).toBe('refused');
  });

  it('exposes only context, console and doc beyond standard JavaScript, and not as globals', async () => {
    const body = await bodyOf(
      "context.setBody([Object.getOwnPropertyNames(globalThis).filter((k) => /^(context|console|doc|__.*)$/.test(k)).join(','), typeof context, typeof console, typeof doc].join('|'))",
    );
    expect(body).toBe('|object|object|object');
  });

  it('keeps the methods of context, console and doc from being replaced', async () => {
    const body = await bodyOf(
      'try { context.setBody = null } catch (e) {} try { console.log = null } catch (e) {} context.setBody(typeof context.setBody + typeof console.log)',
    );
    expect(body).toBe('functionfunction');
  });

  it('freezes the built-ins: tampering fails in strict code and has no effect in sloppy code', async () => {
    const engine = await engineFor({
      strict: "'use strict'; Array.prototype.push = null",
      sloppy: 'Object.prototype.toJSON = () => 42; JSON.parse = null',
      check:
        "context.setBody([typeof [].push, typeof ({}).toJSON, typeof JSON.parse, [Object.prototype, Array.prototype, Function.prototype, Object.getPrototypeOf(function* () {}), Object.getPrototypeOf([][Symbol.iterator]()), Object.getPrototypeOf(Int8Array), JSON, Math, Reflect, Promise].every(Object.isFrozen)].join(','))",
    });
    const strict = await engine.runStep('strict', input());
    expect(strict.errors).toEqual([expect.stringMatching(/^resultsProcessor: TypeError: /)]);
    const sloppy = await engine.runStep('sloppy', input('kept'));
    expect(sloppy.errors).toEqual([]);
    expect(sloppy.body).toBe('kept');
    expect((await engine.runStep('check', input())).body).toBe('function,undefined,function,true');
  });

  it('still lets a script shadow inherited methods by assignment (toString, name)', async () => {
    const body = await bodyOf(`
      function E() {}
      E.prototype.toString = function () { return 'e'; };
      const o = {}; o.toString = () => 'o';
      const err = new Error('m'); err.name = 'Custom';
      context.setBody([String(new E()), String(o), err.name, String(err), String({})].join('|'));`);
    expect(body).toBe('e|o|Custom|Custom: m|[object Object]');
  });

  it('has no FinalizationRegistry (nothing of a run may run after it)', async () => {
    expect(await bodyOf('context.setBody(typeof FinalizationRegistry)')).toBe('undefined');
  });

  it('gives every run a clean global object', async () => {
    const engine = await engineFor({
      a: 'globalThis.leak = 42; implicitLeak = context.getBody(); var local = 1',
      thrower: "thrownLeak = context.getBody(); throw new Error('after leaking')",
      b: "context.setBody([typeof leak, typeof implicitLeak, typeof local, typeof thrownLeak].join(','))",
    });
    await engine.runStep('a', input('secret'));
    expect((await engine.runStep('b', input())).body).toBe('undefined,undefined,undefined,undefined');
    await engine.runStep('a', input('secret'));
    expect((await engine.runStep('thrower', input('secret'))).errors).toHaveLength(1);
    expect((await engine.runStep('b', input())).body).toBe('undefined,undefined,undefined,undefined');
  });

  it('leaves nothing reachable unfrozen: prototypes, intrinsics made by syntax, values behind accessors', async () => {
    const body = await bodyOf(`
      const G = globalThis, protoOf = Object.getPrototypeOf, gopd = Object.getOwnPropertyDescriptor;
      const made = [
        function* () {}, protoOf((function* () {})()), async function () {}, async function* () {}, protoOf((async function* () {})()),
        [][Symbol.iterator](), new Map().entries(), new Set().values(), ''[Symbol.iterator](), /x/g[Symbol.matchAll]('x'),
        typeof [].values().map === 'function' ? [].values().map((x) => x) : null,
        typeof Iterator === 'function' && Iterator.from ? Iterator.from({ next() { return { done: true }; } }) : null,
        typeof Iterator === 'function' && Iterator.concat ? Iterator.concat() : null,
        (function () { return arguments; })(), (function () { 'use strict'; return arguments; })(),
        function () {}.bind(null), Proxy.revocable({}, {}).revoke, Promise.withResolvers ? Promise.withResolvers().resolve : null,
        new Int8Array(1), new Error('x'), new AggregateError([]), /x/, new Date(0), new WeakRef({}), new DataView(new ArrayBuffer(1)),
        Symbol('s'), 1n, class {}, () => 1,
      ];
      const seen = new Set(), unfrozen = [], pending = [[G, 'globalThis']];
      for (const m of made) if (m !== null) pending.push([protoOf(Object(m)), 'proto of ' + String(typeof m)]);
      while (pending.length) {
        const [o, path] = pending.pop();
        if (o === null || (typeof o !== 'object' && typeof o !== 'function') || seen.has(o)) continue;
        seen.add(o);
        if (o !== G && !Object.isFrozen(o)) unfrozen.push(path);
        pending.push([protoOf(o), path + '.__proto__']);
        for (const k of Reflect.ownKeys(o)) {
          const d = gopd(o, k), name = path + '.' + String(k);
          if ('value' in d) { pending.push([d.value, name]); continue; }
          pending.push([d.get, name + '(get)'], [d.set, name + '(set)']);
          try { pending.push([d.get && d.get.call(o), name + '(value)']); } catch (e) {}
        }
      }
      context.setBody(JSON.stringify(unfrozen.slice(0, 20)));`);
    expect(body).toBe('[]');
  });

  it('keeps a patched built-in method of one run out of the next (the hasOwnProperty.call attack)', async () => {
    const engine = await engineFor({
      attacker: `let r = 'frozen';
        try { Object.defineProperty(Object.prototype.hasOwnProperty, 'call', { value: () => true }); r = 'patched'; } catch (e) {}
        try { const HP = Object.getPrototypeOf([].values().map((x) => x)); HP.next = function marked() { return { done: true }; }; if (HP.next.name === 'marked') r += ',helper patched'; } catch (e) {}
        context.setBody(r)`,
      victim:
        "context.setBody(context.getHeader('x-role') + ',' + [1, 2].values().map((x) => x * 2).toArray().join('+'))",
    });
    expect((await engine.runStep('attacker', input())).body).toBe('frozen');
    const r = await engine.runStep('victim', input(undefined, { headers: { 'x-role': ['user'] } }));
    expect(r.body).toBe('["user"],2+4');
  });

  it('runs no script code after a run ends: promise jobs of one run never reach the next', async () => {
    const engine = await engineFor({
      attacker: `let n = 0;
        class E extends Uint8Array {
          slice() {
            n++;
            Promise.resolve().then(() => { if ('apiKey' in globalThis) globalThis.apiKey = 'attacker'; });
            return n === 1 ? this : Uint8Array.prototype.slice.call(new Uint8Array(this));
          }
        }
        context.setBody(new E([104, 105]));`,
      victim: `apiKey = context.getBody();
        (async () => { await null; context.setProperty('usedKey', apiKey); })();
        context.setBody('done');`,
    });
    const a = await engine.runStep('attacker', input());
    expect(new TextDecoder().decode(a.body as Uint8Array)).toBe('hi');
    const v = await engine.runStep('victim', input('mine'));
    expect(v.properties['usedKey']).toBe('mine');
  });

  it('reclaims memory a run pinned where the audit cannot see it, and never shares it with another engine', async () => {
    const [limits, stamp, big] = [PIN_LIMITS, PIN_16_MIB, ALLOC_24_MIB];
    const attacker = await engineFor({ stamp, idle: "context.setBody('idle')", big }, limits);
    const other = await engineFor({ big }, limits);
    expect((await attacker.runStep('stamp', input())).body).toBe('pinned');
    // Another engine has its own sandbox (its own wasm heap): unaffected at once.
    expect((await other.runStep('big', input())).body).toBe('24');
    // The same engine gets the memory back at the next check (every 16th run of its sandbox).
    for (let i = 0; i < 16; i++) await attacker.runStep('idle', input());
    expect((await attacker.runStep('big', input())).body).toBe('24');
  });

  it('has no SharedArrayBuffer (growing one reaches memory outside it in this QuickJS build)', async () => {
    expect(await bodyOf('context.setBody(typeof SharedArrayBuffer)')).toBe('undefined');
  });

  it('reports thrown non-errors (a promise, null, a getter that throws) as script errors', async () => {
    const engine = await engineFor({
      promise: 'throw Promise.resolve(1)',
      nothing: 'throw null',
      getter: "throw { get name() { throw new Error('no') }, message: 'kept' }",
      ok: "context.setBody('fine')",
    });
    for (const [id, text] of [
      ['promise', 'resultsProcessor: '],
      ['nothing', 'resultsProcessor: null'],
      ['getter', 'resultsProcessor: kept'],
    ] as const) {
      const r = await engine.runStep(id, input());
      expect(r.errors).toEqual([text]);
      expect((await engine.runStep('ok', input())).body).toBe('fine');
    }
  });

  it('discards a realm whose global object the run changed beyond repair', async () => {
    const engine = await engineFor({
      pinned:
        "Object.defineProperty(globalThis, 'pinned', { get() { return 'stale' }, set(v) {}, configurable: false })",
      proto: "Object.setPrototypeOf(globalThis, new Proxy({}, { get: () => 'stale', has: () => true }))",
      sealed: 'Object.preventExtensions(globalThis)',
      check:
        "implicit = 1; context.setBody([typeof pinned, typeof whatever, Object.getPrototypeOf(globalThis) === Object.prototype, implicit].join(','))",
    });
    for (const id of ['pinned', 'proto', 'sealed']) {
      expect((await engine.runStep(id, input())).errors).toEqual([]);
      expect((await engine.runStep('check', input())).body).toBe('undefined,undefined,true,1');
    }
  });
});

describe('time limit (S52)', () => {
  it('ends while(true){} with ENGINE_TIMEOUT while the event loop keeps serving', async () => {
    const engine = await engineFor(
      { spin: 'while (true) {}', ok: "context.setBody('fine')" },
      { timeMs: 400 },
    );
    let ticks = 0;
    const timer = setInterval(() => ticks++, 20);
    const started = Date.now();
    const spinning = engine.runStep('spin', input());
    // Handled now: under load the 'ok' run can outlast the 400 ms limit, and the rejection must not be unhandled.
    spinning.catch(() => undefined);
    const timerDuringRun = new Promise<number>((r) => setTimeout(() => r(Date.now() - started), 50));
    const promiseDuringRun = Promise.resolve().then(() => Date.now() - started);
    const other = await engine.runStep('ok', input());
    await expect(spinning).toThrowCode(EngineError, 'ENGINE_TIMEOUT');
    clearInterval(timer);
    expect(other.body).toBe('fine');
    expect(await timerDuringRun).toBeLessThan(350);
    expect(await promiseDuringRun).toBeLessThan(100);
    expect(ticks).toBeGreaterThan(5);
  });

  it('cannot catch the interrupt', async () => {
    const engine = await engineFor({ s: 'for (;;) { try { for (;;) {} } catch (e) {} }' }, { timeMs: 200 });
    await expect(engine.runStep('s', input())).toThrowCode(EngineError, 'ENGINE_TIMEOUT');
  });

  it('ends a loop of cheap host calls at the deadline', async () => {
    const engine = await engineFor({ s: 'for (;;) context.counter("n", 1)' }, { timeMs: 300 });
    await expect(engine.runStep('s', input())).toThrowCode(EngineError, 'ENGINE_TIMEOUT');
  });

  it('ends catastrophic regex backtracking with ENGINE_TIMEOUT', async () => {
    const engine = await engineFor(
      { s: "context.regexMatch('^(a+)+$', 'a'.repeat(40) + 'b')" },
      { timeMs: 300 },
    );
    await expect(engine.runStep('s', input())).toThrowCode(EngineError, 'ENGINE_TIMEOUT');
  });

  it('runs the next step normally after a timeout', async () => {
    const engine = await engineFor(
      { spin: 'while (true) {}', ok: "context.setBody('fine')" },
      { timeMs: 200 },
    );
    await expect(engine.runStep('spin', input())).toThrowCode(EngineError, 'ENGINE_TIMEOUT');
    expect((await engine.runStep('ok', input())).body).toBe('fine');
  });
});

describe('memory and stack limits', () => {
  it('ends a huge allocation with ENGINE_MEMORY and the process survives', async () => {
    const engine = await engineFor(
      { big: "const a = []; for (;;) a.push('x'.repeat(1 << 20) + a.length)", ok: "context.setBody('fine')" },
      { memoryBytes: 8 * 1024 * 1024 },
    );
    await expect(engine.runStep('big', input())).toThrowCode(EngineError, 'ENGINE_MEMORY');
    expect((await engine.runStep('ok', input())).body).toBe('fine');
  });

  it('ends a single huge string with ENGINE_MEMORY', async () => {
    const engine = await engineFor({ big: "context.setBody('x'.repeat(900000000))" });
    await expect(engine.runStep('big', input())).toThrowCode(EngineError, 'ENGINE_MEMORY');
  });

  it('turns unbounded recursion into an errored result', async () => {
    const engine = await engineFor({ deep: 'function f(n) { return f(n + 1) + 1 } f(0)' });
    const r = await engine.runStep('deep', input());
    expect(r.errored).toBe(true);
    expect(r.errors[0]).toMatch(/stack overflow/i);
  });
});

describe('worker pool', () => {
  it('completes more concurrent runs than it keeps workers, with nested and forgotten runs', async () => {
    const engine = await engineFor({
      top: "context.sleep(20); const r = context.sendToStep('leaf', 'x'); context.sendToStepAndForget('leaf', 'y'); context.setBody(r.getBody())",
      leaf: "context.setBody('leaf ' + context.getBody())",
    });
    const results = await Promise.all(Array.from({ length: 12 }, () => engine.runStep('top', input())));
    expect(results.map((r) => r.body)).toEqual(Array.from({ length: 12 }, () => 'leaf x'));
  });

  it('keeps a set number of workers: one worker still completes concurrent, nested and forgotten runs', async () => {
    const engine = await engineFor({
      top: "context.sleep(5); const r = context.sendToStep('leaf', 'x'); context.sendToStepAndForget('leaf', 'y'); context.setBody(r.getBody())",
      leaf: "context.setBody('leaf ' + context.getBody())",
    });
    setSandboxWorkers(1);
    try {
      const results = await Promise.all(Array.from({ length: 6 }, () => engine.runStep('top', input())));
      expect(results.map((r) => r.body)).toEqual(Array.from({ length: 6 }, () => 'leaf x'));
    } finally {
      setSandboxWorkers(MAX_POOLED_WORKERS);
    }
  });

  it('ends workers idle for the set time and starts them again when runs come', async () => {
    const engine = await engineFor({ s: "context.sleep(5); context.setBody('ok')" });
    setSandboxIdleMs(50);
    try {
      const first = await Promise.all(Array.from({ length: 3 }, () => engine.runStep('s', input())));
      expect(first.map((r) => r.body)).toEqual(['ok', 'ok', 'ok']);
      expect(sandboxWorkersStarted()).toBeGreaterThan(0);
      // Polled, not timed: the pool ends its idle workers some time after 50 ms.
      for (let i = 0; i < 200 && sandboxWorkersStarted() > 0; i++)
        await new Promise((r) => setTimeout(r, 25));
      expect(sandboxWorkersStarted()).toBe(0);
      const again = await engine.runStep('s', input());
      expect(again.body).toBe('ok');
    } finally {
      setSandboxIdleMs(DEFAULT_SANDBOX_IDLE_MS);
    }
  });

  it('keeps idle workers when the idle time is 0', async () => {
    const engine = await engineFor({ s: "context.setBody('ok')" });
    // The run's worker goes idle under a 50 ms idle time, which is then set to 0: it must not end after 50 ms.
    setSandboxIdleMs(50);
    try {
      expect((await engine.runStep('s', input())).body).toBe('ok');
      setSandboxIdleMs(0);
      const started = sandboxWorkersStarted();
      await new Promise((r) => setTimeout(r, 200));
      expect(sandboxWorkersStarted()).toBe(started);
      expect(started).toBeGreaterThan(0);
    } finally {
      setSandboxIdleMs(DEFAULT_SANDBOX_IDLE_MS);
    }
  });

  it('refuses an idle time that is not an integer from 0 to the maximum, naming the value', () => {
    for (const bad of [-1, 0.5, Number.NaN, MAX_SANDBOX_IDLE_MS + 1]) {
      let err: unknown;
      try {
        setSandboxIdleMs(bad);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(EngineError);
      expect((err as EngineError).code).toBe('ENGINE_LIMIT');
      expect((err as EngineError).message).toContain(String(bad));
    }
  });

  it('keeps one worker per core by default, from 2 to 8 (ADR 0119)', () => {
    expect(MAX_POOLED_WORKERS).toBe(Math.max(2, Math.min(8, availableParallelism())));
  });

  it('refuses a worker count that is not an integer from 1 to the maximum, naming the value', () => {
    for (const bad of [0, -1, 1.5, Number.NaN, MAX_SANDBOX_WORKERS + 1]) {
      let err: unknown;
      try {
        setSandboxWorkers(bad);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(EngineError);
      expect((err as EngineError).code).toBe('ENGINE_LIMIT');
      expect((err as EngineError).message).toContain(String(bad));
    }
  });
});
