import { describe, expect, it } from 'vitest';
import { createWorkflowEngine } from '../src/index.js';
import type { StepInput } from '../src/index.js';
import { asAsync } from '@org/test-utils';
import { fakeHost, input, workflow } from './fake-host.js';

async function chain(scripts: string[], inp: StepInput = input('in'), step: Record<string, unknown> = {}) {
  const host = fakeHost();
  const wf = workflow([
    { stepId: 's', resultsProcessor: { processors: scripts.map((script) => ({ script })) }, ...step },
  ]);
  const engine = await createWorkflowEngine(wf, { host, data: { top: 1 } });
  const result = await engine.runStep('s', inp);
  return { host, engine, result };
}

async function body(script: string, inp?: StepInput, step?: Record<string, unknown>): Promise<unknown> {
  const { result } = await chain([script], inp, step);
  expect(result.errors).toEqual([]);
  return result.body;
}

describe('context body and data (docs/interfaces.md §5.2)', () => {
  it('getBody and getMessageBodyAsString return the body; setMessage replaces it', async () => {
    expect(await body("context.setMessage(context.getBody() + '|' + context.getMessageBodyAsString())")).toBe(
      'in|in',
    );
  });

  it('serialises object bodies like the host serialiser', async () => {
    expect(await body('context.setBody({ status: 200, list: [1, "a"], o: { k: null } })')).toBe(
      '{"status" : 200, "list" : [1, "a"], "o" : {"k" : null}}',
    );
  });

  it('setBody(null) clears the body', async () => {
    expect(await body('context.setBody(null)')).toBeUndefined();
  });

  it('getPassedMessageAsString keeps the message the step was called with', async () => {
    const { result } = await chain([
      "context.setBody('changed')",
      'context.setBody(context.getPassedMessageAsString())',
    ]);
    expect(result.body).toBe('in');
  });

  it('chains see the body, headers and properties left by the previous processor', async () => {
    const { result } = await chain([
      "context.setBody('a'); context.setHeader('X-One', '1'); context.setProperty('p', 'v')",
      "context.setBody(context.getBody() + context.getHeader('x-one') + context.getProperty('p'))",
    ]);
    expect(result.body).toBe('a["1"]v');
  });

  it('end() skips the remaining processors of the step', async () => {
    const { result } = await chain(["context.setBody('first'); context.end()", "context.setBody('second')"]);
    expect(result).toMatchObject({ body: 'first', errored: false });
  });

  it('getData() is a JSON string and getData(key) always a string', async () => {
    const step = { data: { n: 3, flag: true, obj: { a: [1] }, s: 'x' } };
    const out = await body(
      "context.setBody([context.getData(), context.getData('n'), context.getData('flag'), context.getData('obj'), context.getData('s'), String(context.getData('missing'))].join('|'))",
      undefined,
      step,
    );
    expect(out).toBe('{"top":1,"n":3,"flag":true,"obj":{"a":[1]},"s":"x"}|3|true|{"a":[1]}|x|null');
  });
});

describe('context streams (docs/interfaces.md §5.2, S5)', () => {
  const enc = new TextEncoder();

  it('reads the input stream with read(n), available() and readAll()', async () => {
    const stream = asAsync([enc.encode('hello '), enc.encode('world')]);
    const out = await body(
      "const r = context.getStream(); const a = r.read(3); const n = r.available(); const rest = r.readAll(); context.setBody(context.bytes().toString(a) + '|' + n + '|' + context.bytes().toString(rest))",
      input(undefined, { stream }),
    );
    expect(out).toBe('hel|3|lo world');
  });

  it('does not touch the input stream of a step that never reads it', async () => {
    let opened = 0;
    const stream: AsyncIterable<Uint8Array> = {
      [Symbol.asyncIterator]() {
        opened++;
        return asAsync([enc.encode('x')])[Symbol.asyncIterator]();
      },
    };
    await body("context.setBody('no read')", input(undefined, { stream }));
    expect(opened).toBe(0);
  });

  it('gives an empty reader, never null, when there is no stream (S5)', async () => {
    const out = await body(
      "const r = context.getStream(); context.setBody(r.available() + ':' + r.readAll().length)",
    );
    expect(out).toBe('0:0');
  });

  it('setStream sets a binary result body and setStream(null) clears it', async () => {
    const { result } = await chain(['context.setStream(context.bytes().hexToBinary("00ff10"))']);
    expect(result.body).toEqual(new Uint8Array([0, 255, 16]));
    const cleared = await chain(['context.setStream(new Uint8Array([1])); context.setStream(null)']);
    expect(cleared.result.body).toBeUndefined();
    expect((await chain(['context.setStream(null)'])).result.body).toBe('in');
  });
});

describe('context headers and properties (docs/interfaces.md §5.3)', () => {
  it('getHeader returns a JSON array string, case-insensitively, or null', async () => {
    const out = await body(
      "context.setBody(context.getHeader('ACCEPT') + '|' + context.getHeader('x-none'))",
      input('in', { headers: { Accept: ['a/b', 'c/d'] } }),
    );
    expect(out).toBe('["a/b","c/d"]|null');
  });

  it('removeHeader and removeAllHeaders remove set and received headers', async () => {
    const { result } = await chain(
      [
        "context.setHeader('X-A', '1'); context.setHeader('X-B', '2'); context.removeHeader('x-a'); context.removeHeader('accept')",
        "context.setBody(String(context.getHeader('accept')) + String(context.getHeader('x-a')) + context.getHeader('x-b'))",
      ],
      input('in', { headers: { accept: ['x'] } }),
    );
    expect(result).toMatchObject({ body: 'nullnull["2"]', headers: { 'X-B': '2' } });
    const all = await chain(["context.setHeader('X-A', '1'); context.removeAllHeaders()"]);
    expect(all.result.headers).toEqual({});
  });

  it('status_code accepts a number or a string; run properties are readable', async () => {
    const inp = input('in', { properties: { 'http.method': 'POST' } });
    const { result } = await chain(
      ["context.setProperty('status_code', 404); context.setBody(context.getProperty('http.method'))"],
      inp,
    );
    expect(result).toMatchObject({
      status: 404,
      body: 'POST',
      properties: { 'http.method': 'POST', status_code: '404' },
    });
    expect((await chain(["context.setProperty('status_code', ' 202 ')"])).result.status).toBe(202);
    expect((await chain(["context.setProperty('status_code', 'abc')"])).result.status).toBeUndefined();
  });

  it('getStepProperties() is kept by the step across runs', async () => {
    const host = fakeHost();
    const script =
      "const p = context.getStepProperties(); p.set('n', String(Number(p.get('n') || 0) + 1)); context.setBody(p.get('n') + ':' + p.keys().join())";
    const engine = await createWorkflowEngine(workflow([{ stepId: 's', resultsProcessor: { script } }]), {
      host,
      data: {},
    });
    await engine.runStep('s', input());
    expect((await engine.runStep('s', input())).body).toBe('2:n');
  });

  it('getStepProperties() has put and containsKey, the same as set and a non-null get', async () => {
    const { result } = await chain([
      "const p = context.getStepProperties(); const before = p.containsKey('k'); p.put('k', 'v'); p.put('gone', 'x'); p.remove('gone'); context.setBody([before, p.containsKey('k'), p.get('k'), p.containsKey('gone')].join())",
    ]);
    expect(result).toMatchObject({ errored: false, body: 'false,true,v,false' });
  });

  it('refuses getStepProperties().put in an authentication context with ENGINE_NOT_PERMITTED', async () => {
    const { result } = await chain(['context.setBody(1)'], input(), {
      authenticationProcessor: {
        script: "context.getStepProperties().put('k', 'v')",
      },
      urlGenerator: { script: "context.setUrl('h', '/a')" },
    });
    expect(result.errored).toBe(true);
    expect(result.errors.join()).toContain('ENGINE_NOT_PERMITTED');
  });
});

describe('context metrics, logging and time (docs/interfaces.md §5.6)', () => {
  it('sendMetric in both forms, counter and delta', async () => {
    const { host, result } = await chain([
      "context.sendMetric('m1', 5); context.sendMetric(1234, 'm2', 7, { region: 'eu' }); context.counter('c', 2); const c = context.counter('c', 3); context.delta('d', 10); const d = context.delta('d', 14); context.setBody(c + ',' + d + ',' + context.counter('c', 0))",
    ]);
    expect(result.body).toBe('5,4,5');
    expect(host.metrics).toEqual([
      { key: 'm1', value: 5, timestamp: 1_700_000_000_000, dimensions: {} },
      { key: 'm2', value: 7, timestamp: 1234, dimensions: { region: 'eu' } },
    ]);
  });

  it("adds the string entries of the processor's data.metadata to every metric as dimensions; explicit ones win", async () => {
    const host = fakeHost();
    const key = 'ab'.repeat(32);
    const wf = workflow([
      {
        stepId: 's',
        data: { metadata: { team: 'step', count: 5, nested: { a: 'b' } } },
        resultsProcessor: {
          script:
            "context.crypto().registerKey('symmetric', 'secret', context.getData('k')); context.sendMetric('m1', 1); context.sendMetric(1234, 'm2', 2, { env: 'explicit' })",
          data: { k: key, metadata: { proc: 'p', hidden: 'x' + key } },
        },
      },
    ]);
    const engine = await createWorkflowEngine(wf, {
      host,
      data: { metadata: { env: 'prod', team: 'boot' } },
    });
    expect((await engine.runStep('s', input())).errors).toEqual([]);
    const dims = { env: 'prod', team: 'step', proc: 'p', hidden: 'x' };
    expect(host.metrics).toEqual([
      { key: 'm1', value: 1, timestamp: 1_700_000_000_000, dimensions: dims },
      { key: 'm2', value: 2, timestamp: 1234, dimensions: { ...dims, env: 'explicit' } },
    ]);
  });

  it('adds the ad dimension the data.ad settings name for the metric when the data has no metadata (issue 28, as the reference)', async () => {
    // As the reference's public elastic ML test: `ad` is set in the workflow's data only, per metric name, and
    // the metric is sent with explicit dimensions by a step that declares no metadata.
    const host = fakeHost();
    const send = (key: string, dims: string) => `context.sendMetric(5, '${key}', 2, ${dims});`;
    const wf = {
      workflows: [
        {
          name: 'w',
          data: {
            ad: { stopped: ['NON_ZERO'], low: ['NOT_A_SETTING', 'MEAN_LOW', 'MAX'], named: 'VARIANCE' },
          },
          steps: [
            {
              stepId: 'plain',
              resultsProcessor: {
                script: [
                  send('stopped', "{ jobs: 'j2 j3' }"),
                  "context.sendMetric('low', 1);",
                  send('named', 'undefined'),
                  send('stopped', "{ ad: 'mine' }"),
                  send('other', '{}'),
                ].join(' '),
              },
            },
            {
              stepId: 'withMetadata',
              resultsProcessor: {
                script: send('stopped', "{ jobs: 'j2' }"),
                data: { metadata: { period: '1m' } },
              },
            },
          ],
        },
      ],
    };
    const engine = await createWorkflowEngine(wf, { host, data: {} });
    for (const step of ['plain', 'withMetadata'])
      expect((await engine.runStep(step, input())).errors).toEqual([]);
    expect(host.metrics.map((m) => [m.key, m.dimensions])).toEqual([
      ['stopped', { ad: 'ad_nonz', jobs: 'j2 j3' }],
      ['low', { ad: 'ad_ml' }],
      ['named', { ad: 'ad_v' }],
      ['stopped', { ad: 'mine' }],
      ['other', {}],
      // With a metadata object the data's declared dimensions are the metadata, exactly (the reference's tests).
      ['stopped', { period: '1m', jobs: 'j2' }],
    ]);
  });

  it('delta returns the value itself the first time (a missing previous value counts as 0)', async () => {
    const { result } = await chain([
      "context.setBody([context.delta('d', 10), context.delta('d', 14), context.delta('e', -3)].join())",
    ]);
    expect(result.body).toBe('10,4,-3');
  });

  it('diagnosticLog and console.* reach the host log with level and source', async () => {
    const { host } = await chain([
      "context.diagnosticLog('diag'); console.log('a', 1, {b: 2}); console.warn('w'); console.error('e')",
    ]);
    expect(host.logs).toEqual([
      { level: 'info', message: 'diag', stepId: 's', source: 'diagnostic' },
      { level: 'info', message: 'a 1 {"b":2}', stepId: 's', source: 'console' },
      { level: 'warn', message: 'w', stepId: 's', source: 'console' },
      { level: 'error', message: 'e', stepId: 's', source: 'console' },
    ]);
  });

  it('getTimestamp uses the host clock or the step timestampOverride; sleep pauses', async () => {
    expect(await body('context.sleep(5); context.setBody(String(context.getTimestamp()))')).toBe(
      '1700000000000',
    );
    expect(
      await body('context.setBody(String(context.getTimestamp()))', undefined, { timestampOverride: 42 }),
    ).toBe('42');
  });
});

describe('context utilities (docs/interfaces.md §5.7)', () => {
  it('hash is CRC-32 (unsigned)', async () => {
    expect(await body("context.setBody(String(context.hash('filebeat-7.6.0-2020.06.12')))")).toBe(
      '3215972377',
    );
  });

  it('regexMatch returns the groups or null; mergeJsonStrings merges deeply', async () => {
    const out = await body(
      'context.setBody(JSON.stringify([context.regexMatch(\'a(\\\\d+)\', \'xa12\'), context.regexMatch(\'z\', \'a\'), context.mergeJsonStrings(\'{"a":{"b":1},"c":[1]}\', \'{"a":{"d":2},"c":[2]}\')]))',
    );
    expect(out).toBe('[["a12","12"],null,"{\\"a\\":{\\"b\\":1,\\"d\\":2},\\"c\\":[2]}"]');
  });

  it('bytes() converts hex, Base64 and UTF-8 and hashes with SHA-256', async () => {
    const out = await body(`
      const b = context.bytes();
      const u = b.createFromString('héllo €');
      context.setBody([b.binaryToHex(b.sha256(b.createFromString('abc'))), b.binaryToBase64(u), b.toString(b.base64ToBinary(b.binaryToBase64(u))),
        b.getSize(b.concat(u, b.create(2))), b.binaryToHex(b.hexToBinary('0aFF'))].join('|'));`);
    expect(out).toBe(
      'BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD|aMOpbGxvIOKCrA==|héllo €|12|0AFF',
    );
  });

  it('bytes().binaryToHex writes upper case and hexToBinary reads either case (issue 28, as the reference)', async () => {
    // The reference's public test of a cached IdP key set logs a digest's binaryToHex in upper case.
    const out = await body(`
      const b = context.bytes();
      const h = b.binaryToHex(b.createFromByteArray([0, 10, 171, 205, 239, 255]));
      context.setBody([h, b.binaryToHex(b.hexToBinary(h.toLowerCase())) === h, b.binaryToHex(b.create(0))].join('|'));`);
    expect(out).toBe('000AABCDEFFF|true|');
  });

  it('bytes() builds, copies, writes, reads and streams buffers', async () => {
    const out = await body(`
      const b = context.bytes();
      const a = b.createFromByteArray([1, 2, 3]);
      const c = b.copy(a); b.writeByte(c, 0, 9); b.writeBytes(c, 1, b.createFrom([7]));
      const r = b.reader(b.concat(a, c));
      const first = r.read(2);
      context.setBody([b.binaryToHex(a), b.binaryToHex(c), b.readByte(c, 2), b.binaryToHex(first), r.available(), b.binaryToHex(r.readAll()), b.getSize(b.create(4))].join('|'));`);
    expect(out).toBe('010203|090703|3|0102|4|03090703|4');
  });

  it('rejects out-of-range randomBytes and malformed hex in the script with ENGINE_BAD_ARGUMENT', async () => {
    const out = await body(`
      const seen = [];
      for (const f of [() => context.crypto().randomBytes(1e9), () => context.bytes().hexToBinary('zz')]) {
        try { f(); seen.push('no error'); } catch (e) { seen.push(e.code); }
      }
      context.setBody(seen.join(','));`);
    expect(out).toBe('ENGINE_BAD_ARGUMENT,ENGINE_BAD_ARGUMENT');
  });

  it('crypto().randomBytes returns n bytes', async () => {
    expect(await body('context.setBody(String(context.crypto().randomBytes(16).length))')).toBe('16');
  });

  it('unsupported calls throw ENGINE_UNSUPPORTED naming the call; persistence calls ENGINE_NO_PERSISTENCE', async () => {
    const out = await body(`
      const seen = [];
      for (const f of [() => context.queue(), () => context.setPersistedItem('a', 'b')]) {
        try { f(); seen.push('no error'); } catch (e) { seen.push(e.code + ' ' + e.message); }
      }
      context.setBody(seen.join('\\n'));`);
    expect(String(out).split('\n')).toEqual([
      'ENGINE_NO_PERSISTENCE ENGINE_NO_PERSISTENCE: persistence needs persistenceFile or persistence on step "s"',
      'ENGINE_NO_PERSISTENCE ENGINE_NO_PERSISTENCE: setPersistedItem needs persistenceFile or persistence on step "s"',
    ]);
  });

  it('runs doc-wrapped resources and promise reactions', async () => {
    expect(
      await body("doc.description('d').run(() => { Promise.resolve('p').then((v) => context.setBody(v)); })"),
    ).toBe('p');
  });
});

describe('doc contract wrapper (docs/interfaces.md §5.1)', () => {
  const schema =
    "{ type: 'object', required: ['amount'], properties: { amount: { type: 'number', minimum: 0 } }, additionalProperties: false }";

  it('runs the body when input, data and output match', async () => {
    const out = await body(
      `doc.description('d').inSchema(${schema}).dataSchema({ type: 'object', properties: { top: { type: 'integer' } } }).outSchema({ type: 'string' }).run(() => context.setBody('"ok"'))`,
      input('{"amount": 5}'),
    );
    expect(out).toBe('"ok"');
  });

  it('fails the processor when the input does not match inSchema', async () => {
    const { result } = await chain(
      [`doc.inSchema(${schema}).run(() => context.setBody('ran'))`],
      input('{"amount": "5"}'),
    );
    expect(result).toMatchObject({
      errored: true,
      errors: ['resultsProcessor: doc: body/amount: expected number, found string'],
    });
  });

  it('answers 400 with asUserErrors() and skips the rest of the step', async () => {
    const { result } = await chain(
      [`doc.inSchema(${schema}).asUserErrors().run(() => context.setBody('ran'))`, "context.setBody('next')"],
      input('{"amount": 1, "x": 2}'),
    );
    expect(result).toMatchObject({
      status: 400,
      body: '{"error" : "body: unexpected property x"}',
      errored: false,
    });
  });

  it('checks the output against outSchema and the data against dataSchema', async () => {
    const out = await chain(["doc.outSchema({ type: 'object' }).run(() => context.setBody('[]'))"]);
    expect(out.result.errors).toEqual(['resultsProcessor: doc: output: expected object, found array']);
    const data = await chain(["doc.dataSchema({ type: 'object', required: ['nope'] }).run(() => 1)"]);
    expect(data.result.errors).toEqual(['resultsProcessor: doc: data: missing nope']);
  });

  it('checks the run properties against inPropertySchema before run and outPropertySchema after', async () => {
    const props =
      "{ type: 'object', required: ['tenant'], properties: { tenant: { type: 'string', pattern: '^t-' } } }";
    const ok = await chain(
      [
        `doc.inPropertySchema(${props}).outPropertySchema({ type: 'object', required: ['done'] }).run(() => { context.setProperty('done', 'yes'); context.setBody(context.getProperty('tenant')) })`,
      ],
      input('in', { properties: { tenant: 't-1' } }),
    );
    expect(ok.result).toMatchObject({ errored: false, body: 't-1' });
    const missing = await chain([`doc.inPropertySchema(${props}).run(() => context.setBody('ran'))`]);
    expect(missing.result).toMatchObject({
      errored: true,
      body: 'in',
      errors: ['resultsProcessor: doc: properties: missing tenant'],
    });
    const after = await chain([
      "doc.outPropertySchema({ type: 'object', properties: { n: { type: 'string', maxLength: 2 } } }).run(() => context.setProperty('n', 'long'))",
    ]);
    expect(after.result.errors).toEqual(['resultsProcessor: doc: output properties/n: longer than 2']);
    const user = await chain(
      [`doc.inPropertySchema(${props}).asUserErrors().run(() => context.setBody('ran'))`],
      input('in', { properties: { tenant: 'x' } }),
    );
    expect(user.result).toMatchObject({
      status: 400,
      body: '{"error" : "properties/tenant: does not match the pattern"}',
      errored: false,
    });
  });
});
