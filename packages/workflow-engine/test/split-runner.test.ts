import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DEFAULT_LIMITS,
  EngineError,
  MAX_LIMITS,
  MAX_SPLIT_ITEMS,
  SPLIT_CONCURRENCY,
  createWorkflowEngine,
  type EngineOptions,
  type OutboundRequest,
  type OutboundResponse,
} from '../src/index.js';
import { codedError, fakeHost, input, textResponse, workflow, type FakeHost } from './fake-host.js';
import { loopbackHost, startLoopback, until, type LoopbackServer } from './http-host.js';

const s = (script: string) => ({ script });
const SPLIT = 'scripted-split-aggregate';
const MIB = 1024 * 1024;

/** One item per element of the input's JSON array. */
const splitJsonArray = s('JSON.parse(context.getBody()).forEach((x) => context.addSplitReturnItem(x))');

async function runSplit(
  step: Record<string, unknown>,
  body: string | undefined,
  host: FakeHost = fakeHost(),
  limits?: EngineOptions['limits'],
) {
  const engine = await createWorkflowEngine(workflow([{ stepId: 'fan', type: SPLIT, ...step }]), {
    host,
    data: {},
    ...(limits ? { limits } : {}),
  });
  const result = await engine.runStep('fan', input(body));
  return { host, result };
}

/**
 * A host that holds every call until as many are in flight as the engine may have (`SPLIT_CONCURRENCY`, or the
 * calls still to come), waits a short grace, then answers them in reverse order of arrival. A split that ran
 * items one by one would never fill a batch (the test times out); one that ran more at once would send more
 * calls during the grace and push `maxInFlight` above the bound. The grace only decides how surely a broken
 * bound is caught: a correct engine passes whatever the timing.
 */
function batchingHost(expected: number, answer: (req: OutboundRequest) => OutboundResponse) {
  const held: (() => void)[] = [];
  let inFlight = 0;
  let released = 0;
  const stats = { maxInFlight: 0, answered: [] as string[] };
  const host = fakeHost({
    respond: (req) =>
      new Promise<OutboundResponse>((resolve) => {
        inFlight++;
        stats.maxInFlight = Math.max(stats.maxInFlight, inFlight);
        held.push(() => {
          inFlight--;
          stats.answered.push(req.path);
          resolve(answer(req));
        });
        if (held.length === Math.min(SPLIT_CONCURRENCY, expected - released)) {
          setTimeout(() => {
            const batch = held.splice(0).reverse();
            released += batch.length;
            for (const release of batch) release();
          }, 20);
        }
      }),
  });
  return { host, stats };
}

describe('scripted-split-aggregate (README.md "Split and aggregate")', () => {
  it('runs every item through the call cycle, at most SPLIT_CONCURRENCY at a time, and aggregates in item order', async () => {
    const ids = Array.from({ length: 10 }, (_, i) => `id-${i}`);
    const { host, stats } = batchingHost(ids.length, (req) =>
      textResponse(200, JSON.stringify({ id: req.path.slice('/items/'.length), n: 1 })),
    );
    const { result } = await runSplit(
      {
        splitGenerator: splitJsonArray,
        urlGenerator: s("context.setHttpMethod('GET'); context.setUrl('api', '/items/' + context.getBody())"),
        itemResultProcessor: s('context.setBody(JSON.stringify({ got: JSON.parse(context.getBody()).id }))'),
        resultsProcessor: s("context.setBody(JSON.parse(context.getBody()).map((r) => r.got).join(','))"),
      },
      JSON.stringify(ids),
      host,
    );
    expect(result).toMatchObject({ errored: false, errors: [], body: ids.join(',') });
    expect(host.calls.map((c) => c.path).sort()).toEqual(ids.map((id) => `/items/${id}`).sort());
    expect(host.calls.every((c) => c.method === 'GET' && c.hostId === 'api')).toBe(true);
    expect(stats.maxInFlight).toBe(SPLIT_CONCURRENCY);
    // The calls were answered out of item order; the aggregate is in item order all the same.
    expect(stats.answered).not.toEqual(ids.map((id) => `/items/${id}`));
  });

  it('starts each item from the state the splitGenerator left, with the item as body; item changes stay in the item', async () => {
    const host = fakeHost({ respond: (req) => textResponse(200, `r:${String(req.body)}`) });
    const { result } = await runSplit(
      {
        splitGenerator: s(`
          context.setBody('split body');
          context.setProperty('batch', 'b1');
          context.setHeader('X-Batch', 'b1');
          context.addSplitReturnItem('a');
          context.addSplitReturnItem({ n: 1 });
          context.addSplitReturnItem(7);`),
        urlGenerator: s("context.setProperty('mine', context.getBody()); context.setUrl('api', '/x')"),
        payloadGenerator: s("context.setBody('p:' + context.getBody())"),
        itemResultProcessor: s(
          "context.setBody([context.getProperty('batch'), context.getProperty('mine'), context.getPassedMessageAsString(), context.getProperty('status_code'), context.getBody()].join('|'))",
        ),
        resultsProcessor: s(
          "context.setBody(JSON.stringify({ agg: JSON.parse(context.getBody()), mine: context.getProperty('mine'), batch: context.getProperty('batch'), header: context.getHeader('X-Batch'), status: context.getProperty('status_code') }))",
        ),
      },
      'step input',
      host,
    );
    expect(host.calls.map((c) => c.body).sort()).toEqual(['p:7', 'p:a', 'p:{"n":1}']);
    expect(host.calls.every((c) => c.headers['X-Batch'] === 'b1' && c.method === 'POST')).toBe(true);
    expect(result.errored).toBe(false);
    expect(JSON.parse(String(result.body))).toEqual({
      agg: [
        'b1|a|step input|200|r:p:a',
        'b1|{"n":1}|step input|200|r:p:{"n":1}',
        'b1|7|step input|200|r:p:7',
      ],
      mine: null,
      batch: 'b1',
      header: null,
      status: null,
    });
    expect(result.headers).toEqual({});
    expect(result.properties).toEqual({ batch: 'b1' });
  });

  it('puts JSON bodies into the aggregate as they are, other text as JSON strings and no body as null', async () => {
    const items = ['{"a":1}', '[1, 2]', 'plain', '12345678901234567890', '', 'none', 'stop'];
    const { host, result } = await runSplit(
      {
        splitGenerator: splitJsonArray,
        // No URL: the itemResultProcessor runs on the item itself; end() keeps the body as it is.
        urlGenerator: s("if (context.getBody() === 'stop') context.end()"),
        itemResultProcessor: s(
          "if (context.getBody() === 'none') context.setBody(null); if (context.getBody() === 'stop') context.setBody('not reached')",
        ),
      },
      JSON.stringify(items),
    );
    expect(host.calls).toEqual([]);
    expect(result).toMatchObject({ errored: false, status: undefined });
    expect(result.body).toBe('[{"a":1},[1, 2],"plain",12345678901234567890,"",null,"stop"]');
  });

  it('runs the resultsProcessor on an empty array when there are no items, without calls', async () => {
    const step = {
      urlGenerator: s("context.setUrl('api', '/x')"),
      resultsProcessor: s(
        "context.setBody('got ' + context.getBody() + ' ' + context.getStream().readAll().length)",
      ),
    };
    const none = await runSplit({ ...step, splitGenerator: s('') }, '[]');
    expect(none.result).toMatchObject({ errored: false, body: 'got [] 2' });
    expect(none.host.calls).toEqual([]);
    const noGenerator = await runSplit(step, 'x');
    expect(noGenerator.result).toMatchObject({ errored: false, body: 'got [] 2' });
  });

  it('applies httpStatusHandling and httpConnectFailedProcessor per item', async () => {
    const host = fakeHost({
      respond: (req) => {
        if (req.path === '/down') throw codedError('POLICY_CONNECT_FAILED', 'connection refused');
        return textResponse(req.path === '/missing' ? 404 : 200, 'x');
      },
    });
    const { result } = await runSplit(
      {
        splitGenerator: splitJsonArray,
        urlGenerator: s("context.setUrl('api', '/' + context.getBody())"),
        httpStatusHandling: { '404': s('context.setBody(\'{"missing":true}\')') },
        httpConnectFailedProcessor: s(
          "context.setBody(JSON.stringify({ down: context.getProperty('http.error') }))",
        ),
        itemResultProcessor: s('context.setBody(\'{"ok":true}\')'),
      },
      '["ok", "missing", "down"]',
      host,
    );
    expect(result).toMatchObject({
      errored: false,
      body: '[{"ok":true},{"missing":true},{"down":"POLICY_CONNECT_FAILED"}]',
    });
  });

  it('fails the step on an errored item: no further item starts and the resultsProcessor does not run', async () => {
    const held: {
      req: OutboundRequest;
      resolve: (r: OutboundResponse) => void;
      reject: (e: Error) => void;
    }[] = [];
    const host = fakeHost({
      respond: (req) =>
        new Promise<OutboundResponse>((resolve, reject) => {
          held.push({ req, resolve, reject });
          if (held.length < SPLIT_CONCURRENCY) return;
          // Items 0…3 are in flight: item 0 is refused; the others are answered after that failure is seen.
          for (const h of held) {
            if (h.req.path === '/items/0') h.reject(codedError('POLICY_PATH_NOT_ALLOWED', 'path refused'));
            else setTimeout(() => h.resolve(textResponse(200, '{}')), 0);
          }
        }),
    });
    const items = Array.from({ length: 20 }, (_, i) => String(i));
    const { result } = await runSplit(
      {
        splitGenerator: splitJsonArray,
        urlGenerator: s("context.setUrl('api', '/items/' + context.getBody())"),
        resultsProcessor: s("context.setBody('ran')"),
      },
      JSON.stringify(items),
      host,
    );
    expect(result.errored).toBe(true);
    expect(result.errors).toEqual(['item 0: POLICY_PATH_NOT_ALLOWED: path refused']);
    expect(result.body).not.toBe('ran');
    expect(host.calls).toHaveLength(SPLIT_CONCURRENCY);
  });

  it('reports script errors and addSystemError of items in item order, prefixed with the item index', async () => {
    const { result } = await runSplit(
      {
        splitGenerator: splitJsonArray,
        itemResultProcessor: s(
          "if (context.getBody() === 'b') throw new TypeError('bad item'); if (context.getBody() === 'c') context.addSystemError('c failed')",
        ),
        resultsProcessor: s("context.setBody('ran')"),
      },
      '["a", "b", "c"]',
    );
    expect(result.errored).toBe(true);
    expect(result.errors).toEqual(['item 1: itemResultProcessor: TypeError: bad item', 'item 2: c failed']);
    expect(result.body).not.toBe('ran');
  });

  // 2.4 s in a CI run on 2 shared cores (real servers, child processes or sandbox workers): an explicit timeout.
  it(
    'fails the step with ENGINE_LIMIT past MAX_SPLIT_ITEMS, also when the script catches the error',
    { timeout: 20_000 },
    async () => {
      const add = `for (let i = 0; i <= ${MAX_SPLIT_ITEMS}; i++) context.addSplitReturnItem('i' + i);`;
      const expected = [`splitGenerator: ENGINE_LIMIT: more than ${MAX_SPLIT_ITEMS} split items`];
      const step = {
        urlGenerator: s("context.setUrl('api', '/x')"),
        resultsProcessor: s("context.setBody('ran')"),
      };
      const thrown = await runSplit({ ...step, splitGenerator: s(add) }, undefined);
      expect(thrown.result).toMatchObject({ errored: true, errors: expected });
      const caught = await runSplit(
        { ...step, splitGenerator: s(`try { ${add} } catch (e) { context.setProperty('seen', e.code) }`) },
        undefined,
      );
      expect(caught.result).toMatchObject({
        errored: true,
        errors: expected,
        properties: { seen: 'ENGINE_LIMIT' },
      });
      expect(caught.result.body).not.toBe('ran');
      expect([...thrown.host.calls, ...caught.host.calls]).toEqual([]);
    },
  );

  it('bounds the items and the collected results by the memory limit (ENGINE_LIMIT)', async () => {
    const limits = { memoryBytes: 8 * MIB };
    const items = await runSplit(
      {
        splitGenerator: s(
          "const big = 'x'.repeat(1024 * 1024); for (let i = 0; i < 9; i++) context.addSplitReturnItem(big)",
        ),
      },
      undefined,
      fakeHost(),
      limits,
    );
    expect(items.result.errors).toEqual([
      `splitGenerator: ENGINE_LIMIT: split items over ${8 * MIB} bytes in total`,
    ]);
    const big = textResponse(200, JSON.stringify('y'.repeat(MIB)));
    const results = await runSplit(
      {
        splitGenerator: s("for (let i = 0; i < 40; i++) context.addSplitReturnItem('i' + i)"),
        urlGenerator: s("context.setUrl('api', '/x')"),
        resultsProcessor: s("context.setBody('ran')"),
      },
      undefined,
      fakeHost({ respond: () => big }),
      limits,
    );
    expect(results.result).toMatchObject({
      errored: true,
      errors: [`ENGINE_LIMIT: split results over ${8 * MIB} bytes in total`],
    });
    // The 8th result passes the limit; no item starts after it (up to SPLIT_CONCURRENCY - 1 were running).
    expect(results.host.calls.length).toBeLessThanOrEqual(8 + SPLIT_CONCURRENCY - 1);
  });

  it('runs the authenticationProcessor per item; its headers go on that item call only', async () => {
    const { host, result } = await runSplit(
      {
        splitGenerator: splitJsonArray,
        urlGenerator: s("context.setUrl('api', '/' + context.getBody())"),
        authenticationProcessor: s("context.setHeader('Authorization', 'Bearer tok-' + context.getBody())"),
        itemResultProcessor: s("context.setBody(JSON.stringify(context.getHeader('Authorization')))"),
        resultsProcessor: s("context.setBody(context.getBody() + ' ' + context.getHeader('Authorization'))"),
      },
      '["aaaa", "bbbb"]',
    );
    expect(host.calls.map((c) => [c.path, c.headers['Authorization']]).sort()).toEqual([
      ['/aaaa', 'Bearer tok-aaaa'],
      ['/bbbb', 'Bearer tok-bbbb'],
    ]);
    expect(host.secrets).toEqual(expect.arrayContaining(['Bearer tok-aaaa', 'tok-bbbb']));
    expect(result).toMatchObject({ errored: false, body: '[null,null] null', headers: {} });
  });

  it('refuses an item call that would carry restricted data of another host (ENGINE_NOT_PERMITTED)', async () => {
    const host = fakeHost({ restricted: { idp: JSON.stringify({ clientSecret: 'notExfiltratedAbc123' }) } });
    const { result } = await runSplit(
      {
        splitGenerator: s("context.addSplitReturnItem('one')"),
        urlGenerator: s("context.setUrl('api', '/x')"),
        authenticationProcessor: s(
          "context.setHeader('X-Key', JSON.parse(context.getRestrictedDataFromHost('idp')).clientSecret)",
        ),
      },
      undefined,
      host,
    );
    expect(result.errors).toEqual([
      'item 0: ENGINE_NOT_PERMITTED: the call would carry restricted host data to another host',
    ]);
    expect(host.calls).toEqual([]);
  });

  it('refuses addSplitReturnItem outside a splitGenerator with ENGINE_NOT_PERMITTED', async () => {
    const plain = await createWorkflowEngine(
      workflow([{ stepId: 'p', resultsProcessor: s("context.addSplitReturnItem('x')") }]),
      { host: fakeHost(), data: {} },
    );
    expect((await plain.runStep('p', input())).errors).toEqual([
      'resultsProcessor: ENGINE_NOT_PERMITTED: addSplitReturnItem is only available in the splitGenerator of a scripted-split-aggregate step',
    ]);
    const { result } = await runSplit(
      {
        splitGenerator: s("context.addSplitReturnItem('x')"),
        itemResultProcessor: s("context.addSplitReturnItem('again')"),
      },
      undefined,
    );
    expect(result.errors[0]).toMatch(/^item 0: itemResultProcessor: ENGINE_NOT_PERMITTED: /);
  });

  it('stops the step when the splitGenerator calls end() or throws', async () => {
    const step = {
      itemResultProcessor: s("context.setBody('item')"),
      resultsProcessor: s("context.setBody('ran')"),
    };
    const ended = await runSplit(
      {
        ...step,
        splitGenerator: s("context.addSplitReturnItem('x'); context.setBody('ended'); context.end()"),
      },
      undefined,
    );
    expect(ended.result).toMatchObject({ errored: false, body: 'ended' });
    const threw = await runSplit({ ...step, splitGenerator: s("throw new Error('no items')") }, undefined);
    expect(threw.result).toMatchObject({ errored: true, errors: ['splitGenerator: no items'] });
  });

  it('rejects with ENGINE_TIMEOUT when an item processor runs too long, after the other items are done', async () => {
    const host = fakeHost();
    const engine = await createWorkflowEngine(
      workflow([
        {
          stepId: 'fan',
          type: SPLIT,
          splitGenerator: splitJsonArray,
          itemResultProcessor: s("if (context.getBody() === 'spin') { while (true) {} }"),
        },
      ]),
      { host, data: {}, limits: { timeMs: 200 } },
    );
    await expect(engine.runStep('fan', input('["a", "spin", "b"]'))).toThrowCode(
      EngineError,
      'ENGINE_TIMEOUT',
    );
    expect((await engine.runStep('fan', input('["a"]'))).body).toBe('["a"]');
  });
});

describe('the deadline of a split step (limits.splitTimeMs, ADR 0069)', () => {
  const DEADLINE =
    /^ENGINE_SPLIT_DEADLINE: split step "fan" passed its deadline of (\d+) ms with (\d+) of (\d+) items completed$/;
  /** Items post their body to `api`; the URL is set once, in the splitGenerator. */
  const postItems = s(
    "context.setUrl('api', '/item'); context.setHttpMethod('POST'); JSON.parse(context.getBody()).forEach((x) => context.addSplitReturnItem(x))",
  );
  let api: LoopbackServer;
  beforeAll(async () => {
    // "fast" is answered at once; "slow" never: only the client going away ends it.
    api = await startLoopback((req, res) => {
      if (req.body === 'fast') res.end('done');
    });
  });
  afterAll(() => api.close());

  it('L4: at the deadline no new item starts, calls in flight are aborted and the resultsProcessor does not run', async () => {
    const host = loopbackHost({ api: api.url });
    const engine = await createWorkflowEngine(
      workflow([
        {
          stepId: 'fan',
          type: SPLIT,
          splitGenerator: postItems,
          resultsProcessor: s("context.setBody('aggregated')"),
        },
        { stepId: 'warm', resultsProcessor: s("context.setBody('warm')") },
      ]),
      { host, data: {}, limits: { splitTimeMs: 400 } },
    );
    // Warm: this engine's sandbox is set up, outside any deadline, before the run that meets its deadline.
    expect((await engine.runStep('warm', input())).body).toBe('warm');
    const before = api.seen.length;
    const items = ['fast', 'fast', ...Array<string>(8).fill('slow')];
    const result = await engine.runStep('fan', input(JSON.stringify(items)));
    expect(result.errored).toBe(true);
    expect(result.body).not.toBe('aggregated');
    expect(result.errors).toHaveLength(1);
    const [, ms, done, total] = DEADLINE.exec(result.errors[0]!) ?? [];
    expect([ms, total]).toEqual(['400', '10']);
    // Only the fast items can complete; the four workers then wait on slow items until the deadline.
    const completed = Number(done);
    expect(completed).toBeLessThanOrEqual(2);
    const seen = api.seen.slice(before);
    expect(seen.length).toBeLessThanOrEqual(completed + SPLIT_CONCURRENCY);
    await until(() => seen.filter((r) => r.body === 'slow').every((r) => r.aborted));
    // Nothing starts once runStep has returned.
    expect(api.seen.length - before).toBe(seen.length);
  });

  // 1.0 s in a CI run on 2 shared cores (real servers, child processes or sandbox workers): an explicit timeout.
  it('L4: stops waiting for a host that ignores the abort signal', { timeout: 10_000 }, async () => {
    const signals: AbortSignal[] = [];
    const host = fakeHost({
      respond: (req) => {
        signals.push(req.signal!);
        return new Promise<never>(() => undefined);
      },
    });
    const { result } = await runSplit({ splitGenerator: postItems }, '["a", "b"]', host, {
      splitTimeMs: 1000,
    }); // both items start long before (4 at a time)
    expect(result.errors).toEqual([
      'ENGINE_SPLIT_DEADLINE: split step "fan" passed its deadline of 1000 ms with 0 of 2 items completed',
    ]);
    expect(signals).toHaveLength(2);
    expect(signals.every((sig) => sig.aborted)).toBe(true);
    expect(signals.map((sig) => (sig.reason as EngineError).code)).toEqual(
      Array(2).fill('ENGINE_SPLIT_DEADLINE'),
    );
  });

  it('L4: counts the splitGenerator against the deadline: no item starts after it', async () => {
    const host = loopbackHost({ api: api.url });
    const before = api.seen.length;
    const { result } = await runSplit(
      {
        splitGenerator: s(`${postItems.script}; context.sleep(300)`),
        itemResultProcessor: s("context.setBody('x')"),
      },
      '["fast", "fast", "fast"]',
      host,
      { splitTimeMs: 50 },
    );
    expect(result.errors).toEqual([
      'ENGINE_SPLIT_DEADLINE: split step "fan" passed its deadline of 50 ms with 0 of 3 items completed',
    ]);
    expect(api.seen.length).toBe(before);
  });

  // The splitGenerator (a sandbox run) must end within the deadline: 1 s, not 0.2 s, leaves room for a loaded
  // machine (a 0.2 s deadline failed once on 2 shared cores); the resultsProcessor then sleeps past the deadline's
  // instant whatever the machine's speed, since it starts after the deadline was set. 1.2 s: an explicit timeout.
  it('does not cut the resultsProcessor short once every item is done', { timeout: 10_000 }, async () => {
    const { result } = await runSplit(
      {
        splitGenerator: s("context.addSplitReturnItem('a')"),
        resultsProcessor: s("context.sleep(1200); context.setBody('after ' + context.getBody())"),
      },
      undefined,
      fakeHost(),
      { splitTimeMs: 1000 },
    );
    expect(result).toMatchObject({ errored: false, body: 'after ["a"]' });
  });

  it('keeps the default deadline (DEFAULT_LIMITS.splitTimeMs) well above a call timeout in full', () => {
    expect(DEFAULT_LIMITS.splitTimeMs).toBe(600_000);
    expect(MAX_LIMITS.splitTimeMs).toBeGreaterThanOrEqual(DEFAULT_LIMITS.splitTimeMs);
  });
});

describe('split items: the outbound body is what a generator set', () => {
  it('sends an item as the body only when its payloadGenerator sets it', async () => {
    const urlOnly = await runSplit(
      { splitGenerator: splitJsonArray, urlGenerator: s("context.setUrl('api', '/items')") },
      '["a"]',
    );
    expect(urlOnly.host.calls[0]).toMatchObject({ method: 'GET', body: undefined });
    const withPayload = await runSplit(
      {
        splitGenerator: splitJsonArray,
        urlGenerator: s("context.setUrl('api', '/items')"),
        payloadGenerator: s('context.setBody(context.getBody())'),
      },
      '["a"]',
    );
    expect(withPayload.host.calls[0]).toMatchObject({ method: 'POST', body: 'a' });
  });
});
