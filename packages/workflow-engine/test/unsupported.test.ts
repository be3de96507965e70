import { describe, expect, it } from 'vitest';
import {
  createWorkflowEngine,
  describeUnsupported,
  HOST_SERVED_TYPES,
  UNSUPPORTED_CONTEXT_CALLS,
  UNSUPPORTED_STEP_TYPES,
} from '../src/index.js';
import { fakeHost, input, scriptStep, workflow } from './fake-host.js';

/** Calls every function of `context`, `bytes()` and `crypto()` and collects the ENGINE_UNSUPPORTED names. */
const PROBE = `
const found = [];
const NAME = /^ENGINE_UNSUPPORTED: (.*) is not supported by this agent$/;
function probe(obj, args) {
  for (const n of Object.keys(obj)) {
    if (typeof obj[n] !== 'function' || n === 'end' || n === 'addSystemError' || n === 'setBody' || n === 'setMessage') continue;
    try { obj[n].apply(obj, args); } catch (e) {
      if (e && e.code === 'ENGINE_UNSUPPORTED') found.push(NAME.exec(e.message)[1]);
    }
  }
}
probe(context, []);
probe(context.bytes(), []);
probe(context.crypto(), []);
context.setBody(JSON.stringify(found));
`;

describe('UNSUPPORTED_CONTEXT_CALLS', () => {
  it('names exactly the calls the sandbox refuses with ENGINE_UNSUPPORTED', async () => {
    const engine = await createWorkflowEngine(workflow([scriptStep('probe', PROBE)]), {
      host: fakeHost(),
      data: {},
    });
    const result = await engine.runStep('probe', input());
    expect(result.errors).toEqual([]);
    const thrown = JSON.parse(result.body as string) as string[];
    expect([...new Set(thrown)].sort()).toEqual(UNSUPPORTED_CONTEXT_CALLS.map((c) => c.call).sort());
    engine.dispose();
  });
});

describe('UNSUPPORTED_STEP_TYPES', () => {
  it('lists the step types runStep refuses with ENGINE_UNSUPPORTED', async () => {
    const steps = ['scripted', 'scripted-auth', 'scripted-split-aggregate', 'httpFile'].map((type) =>
      scriptStep(type, "context.setBody('ran')", { type }),
    );
    const engine = await createWorkflowEngine(workflow(steps), { host: fakeHost(), data: {} });
    for (const type of ['scripted', 'scripted-auth', 'scripted-split-aggregate', 'httpFile']) {
      const outcome = await engine.runStep(type, input()).then(
        () => 'resolved',
        (err: unknown) => (err as { code?: string }).code,
      );
      expect([type, outcome === 'ENGINE_UNSUPPORTED']).toEqual([type, UNSUPPORTED_STEP_TYPES.includes(type)]);
      expect([type, outcome === 'ENGINE_HOST_SERVED']).toEqual([type, HOST_SERVED_TYPES.has(type)]);
    }
    // httpFile is served by the host (ADR 0077), so every step type of the language is supported.
    expect(UNSUPPORTED_STEP_TYPES).toEqual([]);
    engine.dispose();
  });
});

describe('describeUnsupported', () => {
  it('names each unsupported step type and context call once per step, before anything runs', () => {
    const wf = workflow([
      scriptStep('assets', "context.setBody('x')", { type: 'httpFile' }),
      scriptStep('files', "const f = context.files('inbox'); f.list(); context.files('inbox');"),
      {
        stepId: 'chain',
        urlGenerator: { processors: [{ script: 'context.bytes().gzip(b)' }, { script: 'Math.sign(-1)' }] },
        httpStatusHandling: { '500': { script: "context.crypto().registerKey('sign', 'public', k)" } },
      },
      scriptStep('cross', "context.sendToStep('other-deployment', 'step', context.getBody())"),
      scriptStep(
        'headers',
        "context.sendToStep('step', 'body', { 'x-a': '1' }); context.sendToStep('s', f(1, 2)); context.sendToStep('t', f(\n  1,\n),\n)",
      ),
      scriptStep('plain', 'Math.sign(-2); const zipCode = 1; context.setBody(zipCode)'),
      scriptStep('off', "context.files('x')", { enabled: false }),
    ]);
    // `assets` (httpFile) is host-served, not unsupported.
    expect(describeUnsupported(wf)).toEqual([]);
  });

  it('rejects what is not a compiled workflow with ENGINE_INVALID_WORKFLOW', () => {
    expect(() => describeUnsupported({})).toThrowCode('EngineError', 'ENGINE_INVALID_WORKFLOW');
  });
});

describe('EngineHost.sleep', () => {
  it('routes sleep(ms) through the host when it has one; timestampOverride still fixes getTimestamp', async () => {
    const host = fakeHost();
    const slept: number[] = [];
    host.sleep = (ms) => {
      slept.push(ms);
      return Promise.resolve();
    };
    const engine = await createWorkflowEngine(
      workflow([
        scriptStep(
          's',
          'const a = context.getTimestamp(); context.sleep(9000); context.sleep(20000); context.setBody(a + "/" + context.getTimestamp())',
          { timestampOverride: 42 },
        ),
      ]),
      { host, data: {} },
    );
    const result = await engine.runStep('s', input());
    expect(result.errors).toEqual([]);
    expect(result.body).toBe('42/42');
    expect(slept).toEqual([9000, 10_000]);
    engine.dispose();
  });
});
