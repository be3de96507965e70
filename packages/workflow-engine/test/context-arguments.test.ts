/**
 * Issue 27 ("Coded errors, everywhere a script can fail"): every argument a context call refuses is
 * `ENGINE_BAD_ARGUMENT` (SPEC.md §9), whether the realm or the host refuses it, and a string is never taken
 * where a number is documented. One step per case; each case's script makes one bad call and leaves the error
 * uncaught, so it lands in the step's errors as `resultsProcessor: ENGINE_BAD_ARGUMENT: <call>: <argument> …`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLmdbPersistence, createWorkflowEngine, type WorkflowEngine } from '../src/index.js';
import { scriptEngine } from './engine-script.js';
import { fakeHost, input, scriptStep, workflow } from './fake-host.js';
import { tempDataDir } from './persistence-helpers.js';

/** Where a case runs: an ordinary processor, an authentication context, or a step with a store. */
type Where = 'plain' | 'auth' | 'store';

/** `[what the message starts with (call and argument), the bad call, where]`. */
type Case = [string, string, Where?];

// Values a script may pass by mistake: none has a usable string form, or none is what the call takes.
const SYMBOL = 'Symbol()';
const BARE = 'Object.create(null)'; // no toString: String(x) would throw a TypeError
const CYCLE = '(() => { const o = {}; o.o = o; return o; })()';
const DEEP = '(() => { let o = {}; for (let i = 0; i < 70; i++) o = { o }; return o; })()';
const b = 'context.bytes()';
const c = 'context.crypto()';

const CASES: Case[] = [
  // body, data, stream (SPEC.md §3)
  ['getData: key', `context.getData(${SYMBOL})`],
  ['setBody: x', `context.setBody(${DEEP})`],
  ['setStream: x', 'context.setStream(5)'],
  ['setStream: x', 'context.setStream({})'],
  ['read: n', "context.getStream().read('16')"],
  ['read: n', 'context.getStream().read(-1)'],
  ['read: n', 'context.getStream().read(1.5)'],
  // headers, properties, outbound call (§4)
  ['getHeader: n', `context.getHeader(${SYMBOL})`],
  ['setHeader: name', `context.setHeader(${SYMBOL}, 'v')`],
  ['setHeader: value', `context.setHeader('n', ${BARE})`],
  ['removeHeader: n', `context.removeHeader(${SYMBOL})`],
  ['setUrl: hostId', `context.setUrl(${SYMBOL}, '/')`],
  ['setUrl: path', `context.setUrl('h', ${BARE})`],
  ['setHttpMethod: m', `context.setHttpMethod(${SYMBOL})`],
  ['setProperty: k', `context.setProperty(${BARE}, 'v')`],
  ['setProperty: v', `context.setProperty('k', ${SYMBOL})`],
  ['getProperty: k', `context.getProperty(${SYMBOL})`],
  ['getStepProperties().get: k', `context.getStepProperties().get(${SYMBOL})`],
  ['getStepProperties().set: k', `context.getStepProperties().set(${SYMBOL}, 'v')`],
  ['getStepProperties().set: v', `context.getStepProperties().put('k', ${CYCLE})`],
  ['getStepProperties().containsKey: k', `context.getStepProperties().containsKey(${SYMBOL})`],
  ['getStepProperties().remove: k', `context.getStepProperties().remove(${SYMBOL})`],
  // step to step (§5)
  ['sendToStep: stepId', `context.sendToStep(${SYMBOL}, 'b')`],
  ['sendToStep: body', `context.sendToStep('s', ${CYCLE})`],
  ['sendToStep: headers', "context.sendToStep('s', 'b', 5)"],
  ['sendToStep: headers', "context.sendToStep('s', 'b', ['x'])"],
  ['sendToStep: headers.h', `context.sendToStep('s', 'b', { h: ${SYMBOL} })`],
  ['sendToStep: accessId', `context.sendToStep(${SYMBOL}, 's', 'body')`],
  ['sendToStepAndForget: headers', "context.sendToStepAndForget('s', 'b', true)"],
  ['addSystemError: msg', `context.addSystemError(${SYMBOL})`],
  ['addSplitReturnItem: item', 'context.addSplitReturnItem(null)'],
  ['addSplitReturnItem: item', 'context.addSplitReturnItem(undefined)'],
  ['addSplitReturnItem: item', `context.addSplitReturnItem(${CYCLE})`],
  // authentication calls (§6)
  ['getRestrictedDataFromHost: hostId', `context.getRestrictedDataFromHost(${SYMBOL})`, 'auth'],
  ['callAuthenticationHost: hostId', `context.callAuthenticationHost(${SYMBOL}, '/')`, 'auth'],
  ['callAuthenticationHost: options', "context.callAuthenticationHost('h', '/', 'a body')", 'auth'],
  [
    'callAuthenticationHost: options.headers',
    "context.callAuthenticationHost('h', '/', { headers: 5 })",
    'auth',
  ],
  [
    'callAuthenticationHost: options.method',
    `context.callAuthenticationHost('h', '/', { method: ${SYMBOL} })`,
    'auth',
  ],
  [
    'setAuthenticationPropertiesOnStep: ttlMs',
    "context.setAuthenticationPropertiesOnStep('s', '60000', 'n', 'v')",
    'auth',
  ],
  [
    'setAuthenticationPropertiesOnStep: ttlMs',
    "context.setAuthenticationPropertiesOnStep('s', NaN, 'n', 'v')",
    'auth',
  ],
  [
    'setAuthenticationPropertiesOnStep: json',
    `context.setAuthenticationPropertiesOnStep('s', 1, 'n', ${CYCLE})`,
    'auth',
  ],
  [
    'getAuthenticationPropertiesFromStep: name',
    `context.getAuthenticationPropertiesFromStep('s', ${SYMBOL})`,
    'auth',
  ],
  // metrics, logs, time, utilities (§7)
  ['sendMetric: value', "context.sendMetric('k', '5')"],
  ['sendMetric: value', "context.sendMetric(1700000000000, 'k', '5')"],
  ['sendMetric: tsMs', "context.sendMetric(NaN, 'k', 1)"],
  ['sendMetric: dims', "context.sendMetric('k', 1, 'dims')"],
  ['sendMetric: dims', "context.sendMetric(1700000000000, 'k', 1, ['d'])"],
  ['sendMetric: key', `context.sendMetric(${SYMBOL}, 1)`],
  ['counter: delta', "context.counter('k', '1')"],
  ['counter: key', `context.counter(${SYMBOL}, 1)`],
  ['delta: value', "context.delta('k', '1')"],
  ['delta: value', "context.delta('k', Infinity)"],
  ['diagnosticLog: msg', `context.diagnosticLog(${CYCLE})`],
  ['sleep: ms', "context.sleep('5')"],
  ['sleep: ms', 'context.sleep(NaN)'],
  ['hash: s', 'context.hash(5)'],
  ['hash: s', 'context.hash({})'],
  ['regexMatch: re', "context.regexMatch('(', 'x')"],
  ['regexMatch: s', `context.regexMatch('a', ${SYMBOL})`],
  ['mergeJsonStrings: a', "context.mergeJsonStrings('{', '{}')"],
  ['mergeJsonStrings: b', "context.mergeJsonStrings('{}', 'not json')"],
  // bytes() (§7.1)
  ['create: n', `${b}.create('4')`],
  ['create: n', `${b}.create(-1)`],
  ['create: n', `${b}.create(2 ** 31)`],
  ['createFrom: x', `${b}.createFrom(5)`],
  ['createFromString: s', `${b}.createFromString(${SYMBOL})`],
  ['createFromByteArray: a[1]', `${b}.createFromByteArray([1, '2'])`],
  ['copy: b', `${b}.copy({})`],
  ['concat: a', `${b}.concat(1, [])`],
  ['concat: b[0]', `${b}.concat([], [null])`],
  ['writeBytes: dst', `${b}.writeBytes([0], 0, [1])`],
  ['writeBytes: off', `${b}.writeBytes(${b}.create(2), '0', [1])`],
  ['writeBytes: off', `${b}.writeBytes(${b}.create(2), 2, [1])`],
  ['writeBytes: src', `${b}.writeBytes(${b}.create(1), 0, [1, 2])`],
  ['writeByte: i', `${b}.writeByte(${b}.create(2), '0', 1)`],
  ['writeByte: i', `${b}.writeByte(${b}.create(2), 2, 1)`],
  ['writeByte: v', `${b}.writeByte(${b}.create(2), 0, '1')`],
  ['writeByte: v', `${b}.writeByte(${b}.create(2), 0, 256)`],
  ['writeByte: b', `${b}.writeByte('ab', 0, 1)`],
  ['readByte: i', `${b}.readByte(${b}.create(2), '0')`],
  ['readByte: i', `${b}.readByte(${b}.create(2), 2)`],
  ['getSize: b', `${b}.getSize(5)`],
  ['hexToBinary: h', `${b}.hexToBinary('zz')`],
  ['hexToBinary: h', `${b}.hexToBinary(${SYMBOL})`],
  ['base64ToBinary: s', `${b}.base64ToBinary('!!')`],
  ['binaryToHex: b', `${b}.binaryToHex({})`],
  ['binaryToBase64: b', `${b}.binaryToBase64(5)`],
  ['toString: b', `${b}.toString(true)`],
  ['sha256: b', `${b}.sha256({})`],
  ['reader: b', `${b}.reader(5)`],
  ['read: n', `${b}.reader([1]).read('1')`],
  ['read: n', `${b}.reader([1]).read(-1)`],
  ['gzip: b', `${b}.gzip(context.getStream())`],
  ['gzip: level', `${b}.gzip('x', '6')`],
  ['gzip: level', `${b}.gzip('x', 11)`],
  ['gzip: level', `${b}.gzip('x', NaN)`],
  ['gunzip: maxBytes', `${b}.gunzip(${b}.gzip('x'), '5')`],
  ['gunzip: maxBytes', `${b}.gunzip(${b}.gzip('x'), 0)`],
  ['zip: entries', `${b}.zip('nope')`],
  ['zip: entries[0]', `${b}.zip([null])`],
  ['zip: entries[0].name', `${b}.zip([{ name: ${SYMBOL}, bytes: 'x' }])`],
  ['zip: entries.a', `${b}.zip({ a: 5 })`],
  ['unzip: b', `${b}.unzip(5)`],
  ['unzip: maxBytes', `${b}.unzip(${b}.zip({ a: 'x' }), -1)`],
  // crypto() (§7.2)
  ['randomBytes: n', `${c}.randomBytes('16')`],
  ['randomBytes: n', `${c}.randomBytes(1e9)`],
  ['randomBytes: n', `${c}.randomBytes(-1)`],
  ['randomBytes: n', `${c}.randomBytes(1.5)`],
  ['hash: b', `${c}.hash(5)`],
  ['hmacSha256: key', `${c}.hmacSha256(5, 'x')`],
  ['hmacSha256: data', `${c}.hmacSha256('k', {})`],
  ['generateKeyPair: purpose', `${c}.generateKeyPair(${SYMBOL})`],
  ['registerKey: hex', `${c}.registerKey('symmetric', 'secret', ${SYMBOL})`],
  ['sign: content', `${c}.sign(5, 'key-0')`],
  ['sign: keyId', `${c}.sign('m', ${SYMBOL})`],
  ['verifySignature: signature', `${c}.verifySignature(5, 'm', 'key-0')`],
  ['verifySignature: content', `${c}.verifySignature('s', {}, 'key-0')`],
  ['encrypt: content', `${c}.encrypt({}, 'key-0')`],
  ['encrypt: senderKeyId', `${c}.encrypt('m', 'key-0', ${SYMBOL})`],
  ['decrypt: box', `${c}.decrypt(5, 'key-0')`],
  ['encryptSymmetric: keyId', `${c}.encryptSymmetric('m', ${BARE})`],
  ['decryptSymmetric: box', `${c}.decryptSymmetric(true, 'key-0')`],
  // doc (§7.3)
  ['doc.run: fn', 'doc.run(5)'],
  ['doc.description: t', `doc.description(${SYMBOL})`],
  // persistence (§7.4): a step with a store
  ['setPersistedItem: k', `context.setPersistedItem(${SYMBOL}, 'v')`],
  ['setPersistedItem: v', `context.setPersistedItem('k', ${CYCLE})`, 'store'],
  ['setPersistedItem: k', `context.setPersistedItem(${BARE}, 'v')`, 'store'],
  ['getPersistedItem: k', `context.getPersistedItem(${SYMBOL})`, 'store'],
  ['getTimestampManager().get: k', `context.getTimestampManager().get(${SYMBOL})`, 'store'],
  ['getTimestampManager().set: ts', "context.getTimestampManager().set('k', 'yesterday')", 'store'],
  ['getTimestampManager().set: ts', "context.getTimestampManager().set('k', 1.5)", 'store'],
  ['getTimestampManager().setIfLastest: ts', "context.getTimestampManager().setIfLastest('k', {})", 'store'],
  [
    'getTimestampManager().firstTimestamp: k',
    `context.getTimestampManager().firstTimestamp(${SYMBOL})`,
    'store',
  ],
  ['getTimestampManager().minutesAgo: n', "context.getTimestampManager().minutesAgo('5')", 'store'],
  ['queue: name', `context.queue(${SYMBOL})`, 'store'],
  ['queue().take: n', "context.queue().take('5')", 'store'],
  ['queue().take: n', 'context.queue().take(10001)', 'store'],
  ['queue().take: n', 'context.queue().take(1.5)', 'store'],
  ['queue().push: item', `context.queue().push(${CYCLE})`, 'store'],
  ['queue().returnItem: item', `context.queue().returnItem(${SYMBOL})`, 'store'],
  // files (§7.5): refused in the realm, before the host (here: none) is asked
  ['files: id', `context.files(${SYMBOL})`],
  ['files: read path', `context.files('x').read(${SYMBOL})`],
  ['files: write content', `context.files('x').write('a', ${CYCLE})`],
  ['files: writeBinary off', "context.files('x').writeBinary('a', [1], '1')"],
  ['files: writeBinary buf', "context.files('x').writeBinary('a', {})"],
  ['files: list path', `context.files('x').list(${SYMBOL})`],
  ['files: move to', `context.files('x').move('a', ${SYMBOL})`],
  ['files: delete path', `context.files('x').delete(${BARE})`],
];

/** Calls that take what SPEC.md documents, including its conversions: none may be refused. */
const ACCEPTED: string[] = [
  "context.getTimestampManager().set('k', '1700000000000')", // a string of digits, as apps pass key.toString()
  "context.getTimestampManager().setIfLastest('k', 1700000000001)",
  'context.queue().take(10000)',
  "context.sendMetric('k', 1, { d: 'v' })",
  "context.sendMetric(1700000000000, 'k', 1.5)",
  `${b}.writeByte(${b}.create(1), 0, -1)`, // a signed byte
  `${b}.readByte([7], 0)`,
  `${b}.reader([1, 2]).read()`,
  'context.getStream().read(0)',
  `${c}.randomBytes(65536)`,
  `${b}.gzip('x', null)`,
  `${b}.gunzip(${b}.gzip('x'), 1)`,
  "context.setProperty('n', 5)", // a string argument takes any value with a string form (String(x))
  "context.counter('k', 0)",
];

const stepOf = (id: string, script: string, where: Where = 'plain'): unknown =>
  scriptStep(id, script, {
    ...(where === 'auth' ? { type: 'scripted-auth' } : {}),
    ...(where === 'store' ? { persistenceFile: 'args.store' } : {}),
  });

let engine: WorkflowEngine;
let close: () => Promise<void>;

beforeAll(async () => {
  const { dir, cleanup } = tempDataDir();
  const persistence = createLmdbPersistence({ dataDir: dir });
  close = async () => {
    await persistence.close();
    cleanup();
  };
  const steps = [
    ...CASES.map(([, script, where], i) => stepOf(`bad-${i}`, script, where)),
    ...ACCEPTED.map((script, i) => stepOf(`ok-${i}`, script, 'store')),
  ];
  engine = await createWorkflowEngine(workflow(steps), {
    host: Object.assign(fakeHost(), { persistence }),
    data: {},
  });
});

afterAll(async () => {
  engine.dispose();
  await close();
});

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe('S168 context call arguments (issue 27)', () => {
  it.each(CASES.map(([what, script], i) => [i, what, script] as const))(
    'case %i refuses %s with ENGINE_BAD_ARGUMENT: %s',
    async (i, what) => {
      const { errors } = await engine.runStep(`bad-${i}`, input('in'));
      expect(errors).toHaveLength(1);
      expect(errors[0]).toMatch(new RegExp(`^resultsProcessor: ENGINE_BAD_ARGUMENT: ${escape(what)} `));
    },
  );

  it.each(ACCEPTED.map((script, i) => [i, script] as const))('accepts %i: %s', async (i) => {
    expect((await engine.runStep(`ok-${i}`, input('in'))).errors).toEqual([]);
  });

  it('gives a script that catches it the code on the error (SPEC.md §1)', async () => {
    const { engine: e } = await scriptEngine({
      s: `const seen = [];
        for (const f of [() => context.sleep('5'), () => context.crypto().randomBytes(1e9)]) {
          try { f(); } catch (err) { seen.push(err.code, err.message.startsWith(err.code + ': ')); }
        }
        context.setBody(JSON.stringify(seen));`,
    });
    try {
      const r = await e.runStep('s', input());
      expect(JSON.parse(r.body as string)).toEqual([
        'ENGINE_BAD_ARGUMENT',
        true,
        'ENGINE_BAD_ARGUMENT',
        true,
      ]);
    } finally {
      e.dispose();
    }
  });
});
