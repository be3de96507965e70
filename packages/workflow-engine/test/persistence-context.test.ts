import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createLmdbPersistence,
  createWorkflowEngine,
  EngineError,
  persistenceSpecs,
  type PersistenceProvider,
} from '../src/index.js';
import { fakeHost, input, scriptStep, workflow, type FakeHost } from './fake-host.js';
import { KEY_A, tempDataDir } from './persistence-helpers.js';

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

interface Started {
  host: FakeHost;
  run(stepId: string, body?: string): Promise<{ body: unknown; errors: string[] }>;
}

/** An engine whose host has an LMDB provider on the test's data directory. */
async function start(steps: unknown[], limits = {}, now?: number, authKey?: Uint8Array): Promise<Started> {
  const persistence = createLmdbPersistence({ dataDir: dir, limits, authKey });
  providers.push(persistence);
  const host = Object.assign(fakeHost(now === undefined ? {} : { now }), { persistence });
  const engine = await createWorkflowEngine(workflow(steps), { host, data: {} });
  return {
    host,
    async run(stepId, body) {
      const r = await engine.runStep(stepId, input(body));
      return { body: r.body, errors: r.errors };
    },
  };
}

/** Closes the providers: the next {@link start} is a restart on the same data directory. */
async function restart(): Promise<void> {
  for (const p of providers.splice(0)) await p.close();
}

const persisted = (stepId: string, script: string, extra: Record<string, unknown> = {}) =>
  scriptStep(stepId, script, { persistenceFile: `${stepId}.store`, ...extra });

describe('setPersistedItem / getPersistedItem', () => {
  it('keeps values across runs and across a restart; null when absent', async () => {
    const script = `
      const n = Number(context.getPersistedItem('count') || '0') + 1;
      context.setPersistedItem('count', String(n));
      context.setBody(String(n) + ' ' + context.getPersistedItem('missing'));`;
    let agent = await start([persisted('s', script)]);
    expect((await agent.run('s')).body).toBe('1 null');
    expect((await agent.run('s')).body).toBe('2 null');
    await restart();
    agent = await start([persisted('s', script)]);
    expect((await agent.run('s')).body).toBe('3 null');
  });

  it('stores objects as JSON and removes a key with null', async () => {
    const agent = await start([
      persisted(
        's',
        `context.setPersistedItem('o', { a: [1] }); const o = context.getPersistedItem('o');
         context.setPersistedItem('o', null); context.setBody(o + '|' + context.getPersistedItem('o'));`,
      ),
    ]);
    expect((await agent.run('s')).body).toBe('{"a":[1]}|null');
  });

  it('the `persistence` object form works the same, with the key registered as a secret', async () => {
    const agent = await start([
      scriptStep('s', "context.setPersistedItem('k', 'v'); context.setBody(context.getPersistedItem('k'))", {
        persistence: { persistenceFile: 'enc.store', hexSymmetricKey: KEY_A.toUpperCase() },
      }),
    ]);
    expect((await agent.run('s')).body).toBe('v');
    expect(agent.host.secrets).toContain(KEY_A);
    expect(agent.host.secrets).toContain(KEY_A.toUpperCase());
  });
});

describe('getTimestampManager()', () => {
  it('get/set/setIfLastest/firstTimestamp with numbers or digit strings, as real apps call them', async () => {
    const agent = await start([
      persisted(
        's',
        `const tm = context.getTimestampManager();
         const out = [tm.get('lastRun'), tm.firstTimestamp('lastRun')];
         out.push(tm.setIfLastest('lastRun', (1648522800000).toString()));
         out.push(tm.setIfLastest('lastRun', 1648522760000));
         out.push(tm.setIfLastest('lastRun', '1648522860000'));
         out.push(tm.get('lastRun'), tm.firstTimestamp('lastRun'));
         tm.set('lastRun', 5); out.push(tm.get('lastRun'));
         context.setBody(JSON.stringify(out));`,
      ),
    ]);
    expect(JSON.parse(String((await agent.run('s')).body))).toEqual([
      null,
      null,
      true,
      false,
      true,
      1648522860000,
      1648522800000,
      5,
    ]);
  });

  it('minutesAgo(n) is now − n minutes, honouring timestampOverride', async () => {
    const agent = await start(
      [
        persisted('fixed', 'context.setBody(String(context.getTimestampManager().minutesAgo(2)))', {
          timestampOverride: 1_700_000_000_000,
        }),
        persisted('clock', 'context.setBody(String(context.getTimestampManager().minutesAgo(1.5)))'),
      ],
      {},
      1_000_000_000_000,
    );
    expect((await agent.run('fixed')).body).toBe(String(1_700_000_000_000 - 120_000));
    expect((await agent.run('clock')).body).toBe(String(1_000_000_000_000 - 90_000));
  });

  it('rejects a timestamp that is not epoch milliseconds (a script error)', async () => {
    const agent = await start([persisted('s', "context.getTimestampManager().set('k', 'yesterday')")]);
    expect((await agent.run('s')).errors).toEqual([
      'resultsProcessor: ENGINE_BAD_ARGUMENT: getTimestampManager().set: ts must be epoch milliseconds (a safe integer, or a string of its digits), got a string',
    ]);
  });
});

describe('queue()', () => {
  it('push, take(n) removes from the head, returnItem puts one back; named queues are apart', async () => {
    const agent = await start([
      persisted(
        's',
        `const q = context.queue();
         ['a', 'b', 'c'].forEach((x) => q.push(x));
         context.queue('other').push({ n: 1 });
         const first = q.take(2);
         q.returnItem(first[1]);
         context.setBody(JSON.stringify([first, q.take(5), q.take(1), context.queue('other').take(1)]));`,
      ),
    ]);
    expect(JSON.parse(String((await agent.run('s')).body))).toEqual([
      ['a', 'b'],
      ['b', 'c'],
      [],
      ['{"n":1}'],
    ]);
  });

  it('a producer and a consumer step naming the same file share the queue, across a restart', async () => {
    const steps = [
      persisted('produce', 'context.queue().push(context.getBody())', { persistenceFile: 'shared.store' }),
      persisted('consume', 'context.setBody(JSON.stringify(context.queue().take(10)))', {
        persistenceFile: 'shared.store',
      }),
    ];
    let agent = await start(steps);
    await agent.run('produce', 'one');
    await agent.run('produce', 'two');
    await restart();
    agent = await start(steps);
    expect((await agent.run('consume')).body).toBe('["one","two"]');
    expect((await agent.run('consume')).body).toBe('[]');
  });

  it('S130: a million pushes from a script stop at the queue limit with ENGINE_PERSISTENCE_LIMIT', async () => {
    const agent = await start(
      [
        persisted(
          's',
          `let i = 0, code = null;
           for (; i < 1000000; i++) { try { context.queue().push('item ' + i); } catch (e) { code = e.code; break; } }
           context.setBody(i + ' ' + code + ' ' + context.queue().size());`,
        ),
      ],
      { maxQueueItems: 500 },
    );
    expect((await agent.run('s')).body).toBe('500 ENGINE_PERSISTENCE_LIMIT 500');
  });

  it('S130: a value over the size limit is a coded script error', async () => {
    const agent = await start(
      [
        persisted(
          's',
          "try { context.setPersistedItem('k', 'x'.repeat(2048)); } catch (e) { context.setBody(e.code); }",
        ),
      ],
      { maxValueBytes: 1024 },
    );
    expect((await agent.run('s')).body).toBe('ENGINE_PERSISTENCE_LIMIT');
  });

  it('take(n) refuses n outside 0…10000', async () => {
    const agent = await start([persisted('s', 'context.queue().take(-1)')]);
    expect((await agent.run('s')).errors[0]).toBe(
      'resultsProcessor: ENGINE_BAD_ARGUMENT: queue().take: n must be an integer from 0 to 10000, got -1',
    );
  });
});

describe('delta and steps without persistence', () => {
  it('delta is persisted on a step with persistence and in memory without', async () => {
    const script = "context.setBody(String(context.delta('d', Number(context.getBody()))))";
    const steps = [persisted('p', script), scriptStep('m', script)];
    let agent = await start(steps);
    // The first delta is the value itself: a missing previous value counts as 0 (SPEC.md §7).
    expect((await agent.run('p', '10')).body).toBe('10');
    expect((await agent.run('m', '10')).body).toBe('10');
    await restart();
    agent = await start(steps);
    expect((await agent.run('p', '15')).body).toBe('5');
    expect((await agent.run('m', '15')).body).toBe('15');
  });

  it('every persistence call throws ENGINE_NO_PERSISTENCE on a step without persistence', async () => {
    const agent = await start([
      scriptStep(
        's',
        `const seen = [];
         for (const f of [() => context.setPersistedItem('a', 'b'), () => context.getPersistedItem('a'),
           () => context.getTimestampManager(), () => context.queue(), () => context.queue('x')]) {
           try { f(); seen.push('no error'); } catch (e) { seen.push(e.code); }
         }
         context.setBody(seen.join(','));`,
      ),
    ]);
    expect((await agent.run('s')).body).toBe(Array(5).fill('ENGINE_NO_PERSISTENCE').join(','));
  });

  it('an authenticationProcessor without a key to seal with may read but not write persisted state (ENGINE_NOT_PERMITTED)', async () => {
    const agent = await start([
      {
        stepId: 's',
        persistenceFile: 's.store',
        authenticationProcessor: {
          script: `let code = null; try { context.setPersistedItem('k', 'v'); } catch (e) { code = e.code; }
                   if (code !== 'ENGINE_NOT_PERMITTED' || context.getPersistedItem('k') !== null) throw new Error('bad');`,
        },
        resultsProcessor: { script: "context.setBody('ok')" },
      },
    ]);
    expect(await agent.run('s')).toEqual({ body: 'ok', errors: [] });
  });
});

describe('setPersistedItem in an authentication context (ADR 0130, issue 28)', () => {
  const hostKey = new Uint8Array(32).fill(7);
  const TOKEN = 'tok-8c1f7e2a-cached-login';
  const steps: Record<string, unknown>[] = [
    // A scripted-auth step caches a token in its store, as real apps do; ordinary processors of a step sharing the
    // file cannot read it.
    {
      stepId: 'login',
      type: 'scripted-auth',
      persistenceFile: 'auth.store',
      resultsProcessor: {
        script: `const cached = context.getPersistedItem('token');
                 if (cached === null) context.setPersistedItem('token', '${TOKEN}');
                 context.setBody(cached === null ? 'stored' : cached === '${TOKEN}' ? 'cached' : 'other');`,
      },
    },
    persisted('plain', "context.setBody(String(context.getPersistedItem('token')))", {
      persistenceFile: 'auth.store',
    }) as Record<string, unknown>,
    {
      stepId: 'forget',
      type: 'scripted-auth',
      persistenceFile: 'auth.store',
      resultsProcessor: { script: "context.setPersistedItem('token', null); context.setBody('gone');" },
    },
  ];

  it('stores it sealed, readable by authentication contexts only, across a restart; a changed key reads as absent', async () => {
    let agent = await start(steps, {}, undefined, hostKey);
    expect((await agent.run('login')).errors).toEqual([]);
    expect((await agent.run('login')).errors).toEqual([]);
    expect(await agent.run('plain')).toEqual({ body: 'null', errors: [] });
    await restart();
    expect(readFileSync(join(dir, 'auth.store')).includes(Buffer.from(TOKEN))).toBe(false);
    agent = await start(steps, {}, undefined, hostKey);
    const again = await agent.run('login');
    expect(again.errors).toEqual([]);
    expect(again.body).not.toContain(TOKEN); // a scripted-auth step's result is scrubbed; it read the cache
    await agent.run('forget');
    await restart();
    // Another host key: the old value does not open and reads as absent (a cache to refill), not as an error.
    agent = await start(steps, {}, undefined, new Uint8Array(32).fill(9));
    expect((await agent.run('login')).errors).toEqual([]);
  });

  it('an ordinary processor writing the same key does not touch it, and cannot read it', async () => {
    const agent = await start(
      [
        ...steps,
        persisted('overwrite', "context.setPersistedItem('token', 'plain value'); context.setBody('ok')", {
          persistenceFile: 'auth.store',
        }),
      ],
      {},
      undefined,
      hostKey,
    );
    await agent.run('login');
    await agent.run('overwrite');
    expect(await agent.run('plain')).toEqual({ body: 'plain value', errors: [] });
    const login = await agent.run('login');
    expect(login.errors).toEqual([]);
    expect(login.body).toBe('cached');
  });

  it("uses the step's hexSymmetricKey when the host gives no key", async () => {
    const keyed = steps.map((st) => ({
      ...st,
      persistenceFile: undefined,
      persistence: { persistenceFile: 'auth.store', hexSymmetricKey: KEY_A },
    }));
    const agent = await start(keyed);
    expect(await agent.run('login')).toMatchObject({ errors: [] });
    expect(await agent.run('plain')).toEqual({ body: 'null', errors: [] });
  });
});

describe('durability and metrics', () => {
  it('S127: metrics of a step with persistence are emitted once its writes are durable, in order', async () => {
    const agent = await start([
      persisted(
        's',
        `const n = Number(context.getPersistedItem('n') || '0') + 1;
         context.setPersistedItem('n', String(n)); context.sendMetric('counter', n); context.sendMetric('again', n);`,
      ),
    ]);
    await agent.run('s');
    await agent.run('s');
    expect(agent.host.metrics.map((m) => `${m.key}=${m.value}`)).toEqual([
      'counter=1',
      'again=1',
      'counter=2',
      'again=2',
    ]);
  });
});

describe('persistenceFileFlush', () => {
  it('with persistenceFileFlush "false" writes are committed before the result and survive a restart', async () => {
    const script =
      "context.setPersistedItem('k', String(Number(context.getPersistedItem('k') || '0') + 1)); context.setBody(context.getPersistedItem('k'))";
    const steps = [persisted('s', script, { persistenceFileFlush: 'false' })];
    let agent = await start(steps);
    expect((await agent.run('s')).body).toBe('1');
    await restart();
    agent = await start(steps);
    expect((await agent.run('s')).body).toBe('2');
  });
});

describe('createWorkflowEngine with persistence', () => {
  it('rejects a step with persistence when the host has no provider (ENGINE_PERSISTENCE_INVALID)', async () => {
    await expect(
      createWorkflowEngine(workflow([persisted('s', '')]), { host: fakeHost(), data: {} }),
    ).toThrowCode(EngineError, 'ENGINE_PERSISTENCE_INVALID');
  });

  it('persistenceSpecs lists the enabled steps with persistence', () => {
    const wf = workflow([
      persisted('a', '', { persistenceFileFlush: 'false' }),
      scriptStep('b', ''),
      persisted('c', '', { enabled: false }),
    ]);
    expect(persistenceSpecs(wf)).toEqual([
      { stepId: 'a', spec: { file: 'a.store', flush: false, hexSymmetricKey: undefined, obfuscate: false } },
    ]);
  });
});

describe('steps of the same id in two workflows (ADR 0060)', () => {
  it('a namesake without persistence cannot reach the other step store; each namesake keeps its own', async () => {
    const persistence = createLmdbPersistence({ dataDir: dir });
    providers.push(persistence);
    const host = Object.assign(fakeHost(), { persistence });
    const read =
      "try { context.setBody(String(context.getPersistedItem('balance'))); } catch (e) { context.setBody(e.code); }";
    const write = (v: string) => `context.setPersistedItem('balance', '${v}'); context.setBody('ok')`;
    const wf = {
      workflows: [
        { name: 'billing', steps: [scriptStep('work', write('1000'), { persistenceFile: 'billing.store' })] },
        { name: 'other', steps: [scriptStep('work', read)] },
        { name: 'third', steps: [scriptStep('work', write('3'), { persistenceFile: 'third.store' })] },
      ],
    };
    const engine = await createWorkflowEngine(wf, { host, data: {} });
    const step = (workflowIndex: number) => ({ stepId: 'work', workflowIndex });
    expect((await engine.runStep(step(0), input())).body).toBe('ok');
    expect((await engine.runStep(step(2), input())).body).toBe('ok');
    expect((await engine.runStep(step(1), input())).body).toBe('ENGINE_NO_PERSISTENCE');
    const check = await createWorkflowEngine(
      {
        workflows: [
          {
            name: 'a',
            steps: [
              scriptStep('r', "context.setBody(context.getPersistedItem('balance'))", {
                persistenceFile: 'billing.store',
              }),
            ],
          },
          {
            name: 'b',
            steps: [
              scriptStep('r', "context.setBody(context.getPersistedItem('balance'))", {
                persistenceFile: 'third.store',
              }),
            ],
          },
        ],
      },
      { host, data: {} },
    );
    expect((await check.runStep({ stepId: 'r', workflowIndex: 0 }, input())).body).toBe('1000');
    expect((await check.runStep({ stepId: 'r', workflowIndex: 1 }, input())).body).toBe('3');
  });
});
