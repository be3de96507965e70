// context.packager() (SPEC.md §7.6, ADR 0136): the held request stays on the host, its answer is the response.
import { describe, expect, it } from 'vitest';
import {
  createWorkflowEngine,
  listSteps,
  type PackagerRequest,
  type PackagerResponse,
  type StepInput,
} from '../src/index.js';
import { fakeHost, input, scriptStep, workflow } from './fake-host.js';

const enc = new TextEncoder();
const SECRET = 'held-request-secret-7f3a91c2';

/** A held request that records its runs and answers `answer` (or rejects with it). */
function held(answer: PackagerResponse | Error = ok()) {
  const record = { runs: 0 };
  const request: PackagerRequest = {
    operation: 'key-gen',
    run() {
      record.runs++;
      return answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer);
    },
  };
  return { request, record };
}

function ok(): PackagerResponse {
  return {
    status: 200,
    headers: { 'content-type': 'application/json', 'cache-control': 'no-store' },
    body: enc.encode(`{"secretKeyHex":"${SECRET}"}`),
    code: null,
  };
}

function problem(status: number, code: string): PackagerResponse {
  return {
    status,
    headers: { 'content-type': 'application/problem+json' },
    body: enc.encode(JSON.stringify({ status, code, detail: SECRET })),
    code,
  };
}

async function run(
  script: string,
  options: { grant?: boolean; input?: StepInput; step?: Record<string, unknown>; steps?: unknown[] } = {},
) {
  const host = fakeHost();
  host.packager = options.grant ?? true;
  const steps = [scriptStep('s', script, options.step), ...(options.steps ?? [])];
  const engine = await createWorkflowEngine(workflow(steps), { host, data: {} });
  try {
    const result = await engine.runStep('s', options.input ?? input());
    return { result, host };
  } finally {
    engine.dispose();
  }
}

const logged = (host: ReturnType<typeof fakeHost>) => host.logs.map((l) => l.message);

describe('context.packager()', () => {
  it('runs the held request once; its answer is the response, the script sees status and code only', async () => {
    const { request, record } = held();
    const { result, host } = await run(
      `const r = context.packager();
       console.log(JSON.stringify(r), Object.keys(r).join(','), Object.isFrozen(r));
       console.log('body', context.getBody(), context.getStream().readAll().length);
       context.setProperty('status_code', '299');
       context.setHeader('x-after', 'ignored');
       context.setBody('ignored');`,
      { input: input(undefined, { packagerRequest: request }) },
    );
    expect(record.runs).toBe(1);
    expect(result.errors).toEqual([]);
    expect(result.status).toBe(200);
    expect(result.headers).toEqual({ 'content-type': 'application/json', 'cache-control': 'no-store' });
    expect(new TextDecoder().decode(result.body as Uint8Array)).toContain(SECRET);
    expect(logged(host)).toEqual(['{"status":200,"code":null} status,code true', 'body null 0']);
  });

  it('hands the script the problem code of an error answer, and the answer stays the response', async () => {
    const { request } = held(problem(400, 'REQUEST_BODY_INVALID'));
    const { result, host } = await run(
      `const r = context.packager(); console.log(r.status, r.code);`,
      { input: input(undefined, { packagerRequest: request }) },
    );
    expect(logged(host)).toEqual(['400 REQUEST_BODY_INVALID']);
    expect(result).toMatchObject({ status: 400, errored: false });
    expect(result.headers['content-type']).toBe('application/problem+json');
  });

  it('S157: without the grant the call throws ENGINE_NOT_PERMITTED and the held request never runs', async () => {
    const { request, record } = held();
    const { result, host } = await run(
      `try { context.packager(); } catch (e) { console.log(e.code, e.message); throw e; }`,
      { grant: false, input: input(undefined, { packagerRequest: request }) },
    );
    expect(record.runs).toBe(0);
    expect(logged(host)).toEqual([
      'ENGINE_NOT_PERMITTED ENGINE_NOT_PERMITTED: packager: this deployment has no packager access',
    ]);
    expect(result.errored).toBe(true);
    expect(result.errors.join()).toContain('ENGINE_NOT_PERMITTED');
    expect(result.status).toBeUndefined();
    expect(result.body).toBeUndefined();
  });

  it('refuses a run without a held request, and a second call in one run, with ENGINE_BAD_ARGUMENT', async () => {
    const none = await run(`try { context.packager(); } catch (e) { console.log(e.code); }`);
    expect(logged(none.host)).toEqual(['ENGINE_BAD_ARGUMENT']);
    expect(none.result.status).toBeUndefined();

    const { request, record } = held();
    // The second call comes from a later processor of the same step run.
    const twice = await run(`context.packager();`, {
      input: input(undefined, { packagerRequest: request }),
      step: {
        urlGenerator: { script: 'context.packager();' },
        resultsProcessor: { script: `try { context.packager(); } catch (e) { console.log(e.code, e.message); }` },
      },
    });
    expect(record.runs).toBe(1);
    expect(logged(twice.host)).toEqual([
      'ENGINE_BAD_ARGUMENT ENGINE_BAD_ARGUMENT: packager: the request of this run was already run',
    ]);
    expect(twice.result.status).toBe(200);
  });

  it('gives a sendToStep callee no held request, and refuses the call in an authentication context', async () => {
    const { request, record } = held();
    const { result, host } = await run(
      `const r = context.sendToStep('callee', 'x'); console.log(r.getAllErrors().join());`,
      {
        input: input(undefined, { packagerRequest: request }),
        steps: [scriptStep('callee', `context.packager();`)],
      },
    );
    expect(record.runs).toBe(0);
    expect(logged(host).join()).toContain('ENGINE_BAD_ARGUMENT: packager: this run holds no packager request');
    expect(result.status).toBeUndefined();

    const auth = await run(`context.setUrl('h', '/');`, {
      input: input(undefined, { packagerRequest: request }),
      step: {
        authenticationProcessor: {
          script: `try { context.packager(); } catch (e) { console.log(e.code); }`,
        },
      },
    });
    expect(logged(auth.host)).toEqual(['ENGINE_NOT_PERMITTED']);
    expect(record.runs).toBe(0);
  });

  it('fails the call with a fixed message when the host rejects, never the host error text', async () => {
    const { request } = held(new Error(`boom ${SECRET}`));
    const { result, host } = await run(
      `try { context.packager(); } catch (e) { console.log(e.message); throw e; }`,
      { input: input(undefined, { packagerRequest: request }) },
    );
    expect(logged(host)).toEqual(['ENGINE_OUTBOUND_FAILED: packager: the request failed']);
    expect(JSON.stringify(result)).not.toContain(SECRET);
  });

  it('lists each step’s merged data.packagerOperation in steps and listSteps', async () => {
    const wf = workflow(
      [
        scriptStep('a', '', { data: { packagerOperation: 'key-gen' } }),
        scriptStep('b', ''),
        scriptStep('c', '', { data: { packagerOperation: 7 } }),
      ],
      { data: { shared: 1 } },
    );
    const engine = await createWorkflowEngine(wf, { host: fakeHost(), data: {} });
    expect(engine.steps.map((s) => s.packagerOperation)).toEqual(['key-gen', undefined, 7]);
    engine.dispose();
    expect(listSteps(wf, { packagerOperation: 'health' }).map((s) => s.packagerOperation)).toEqual([
      'key-gen',
      'health',
      7,
    ]);
  });
});
