import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { closeRuntimes, startRuntime, step, wf, type TestDeployment } from './helpers.js';

// Calls between deployments (ADR 0079): sendToStep(accessId, stepId, body) with both sides' grants.
afterEach(closeRuntimes);

const web = (port = 18090) => ({ allowHttpServerAccess: [{ id: 'web', port }] });

/** billing: `charge` open to shop through `from-shop`; `quote` open to anyone; `refund` has no trigger. */
const billing = (record: Record<string, unknown> = {}): TestDeployment => ({
  id: 'billing',
  workflow: wf(
    step(
      'charge',
      "console.log('charge ran'); const o = JSON.parse(context.getBody()); context.setProperty('status_code', '201'); context.setBody(JSON.stringify({ charged: o.amount, caller: context.getProperty('deploymentAccess.deploymentId'), via: context.getProperty('deploymentAccess.id') }));",
      { deploymentAccess: { ids: ['from-shop'] } },
    ),
    step(
      'quote',
      "console.log('quote ran'); context.setBody('42 for ' + context.getProperty('deploymentAccess.deploymentId'))",
      {
        deploymentAccess: { ids: ['from-anyone'] },
      },
    ),
    step('refund', "console.log('refund ran'); context.setBody('refunded')"),
  ),
  record: {
    allowDeploymentAccess: [
      { id: 'from-shop', access: 'receive', deploymentIds: ['shop'] },
      { id: 'from-anyone', access: 'receive', anyDeployment: true },
    ],
    ...record,
  },
});

/** A caller deployment: `call(stepId, body)` steps, each sending a metric `after` only when the call returned. */
const caller = (
  id: string,
  calls: Record<string, string>,
  record: Record<string, unknown> = {},
): TestDeployment => ({
  id,
  workflow: wf(
    step(
      'checkout',
      "const r = context.sendToStep('billing', 'charge', context.getBody()); context.setProperty('status_code', r.isErrored() ? '502' : r.getProperty('status_code')); context.setBody(r.getBody());",
      { http: { server: 'web', method: 'POST', path: '/checkout' } },
    ),
    ...Object.entries(calls).map(([stepId, call]) =>
      step(
        stepId,
        `const r = ${call}; context.sendMetric('after', 1); context.setBody(r.isErrored() ? 'errored: ' + r.getAllErrors().join('; ') : r.getBody());`,
      ),
    ),
  ),
  record: {
    ...web(),
    allowDeploymentAccess: [{ id: 'billing', access: 'call', deploymentIds: ['billing'] }],
    ...record,
  },
});

const refusals = (t: Awaited<ReturnType<typeof startRuntime>>) =>
  t.lines().filter((l) => l['msg'] === 'deployment call refused');

describe('sendToStep(accessId, stepId, body) between deployments', () => {
  it('runs the receiving step with the body, and the caller gets its result (HTTP checkout → billing)', async () => {
    const t = await startRuntime([caller('shop', {}), billing()]);
    const res = await fetch(`http://127.0.0.1:${t.port('shop', 'web')}/checkout`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ amount: 12 }),
    });
    expect([res.status, await res.json()]).toEqual([201, { charged: 12, caller: 'shop', via: 'from-shop' }]);
    expect(t.logs('billing')).toEqual(['charge ran']);
    const run = t.lines().find((l) => l['msg'] === 'step run' && l['trigger'] === 'deploymentAccess');
    expect(run).toMatchObject({ deploymentId: 'billing', stepId: 'charge', caller: 'shop', outcome: 'ok' });
    // Both runs are in the step counters (the agent's `step counters` lines).
    const counted = (d: string, s: string) =>
      t.runtime.stepCounters().find((c) => c.deploymentId === d && c.stepId === s);
    expect(counted('billing', 'charge')).toMatchObject({ runs: 1, errors: 0, running: 0, httpRuns: 0 });
    expect(counted('shop', 'checkout')).toMatchObject({ runs: 1, errors: 0, httpRuns: 1 });
  });

  it('S147 refuses a call the receiver does not grant: neither the callee nor the rest of the caller runs', async () => {
    const t = await startRuntime([
      caller('intruder', { steal: "context.sendToStep('billing', 'charge', '{\"amount\":1}')" }),
      billing(),
    ]);
    const r = await t.runtime.triggerStep('intruder', 'steal');
    expect(r?.errored).toBe(true);
    expect(r?.errors.join()).toContain('AGENT_DEPLOYMENT_ACCESS_DENIED');
    expect(t.logs('billing')).toEqual([]);
    expect(t.metrics('intruder')).toEqual([]);
    expect(refusals(t)).toEqual([
      expect.objectContaining({
        deploymentId: 'intruder',
        rule: 'receiver-grant',
        code: 'AGENT_DEPLOYMENT_ACCESS_DENIED',
      }),
    ]);
  });

  it('S148 takes the caller from the runtime: a deploymentId forged in the body or headers changes nothing', async () => {
    const forged = JSON.stringify({
      amount: 5,
      deploymentId: 'shop',
      'deploymentAccess.deploymentId': 'shop',
    });
    const t = await startRuntime([
      caller('intruder', {
        forge: `context.sendToStep('billing', 'charge', ${JSON.stringify(forged)})`,
        quote: "context.sendToStep('billing', 'quote', '{\"deploymentId\":\"shop\"}')",
      }),
      billing(),
    ]);
    const res = await fetch(`http://127.0.0.1:${t.port('intruder', 'web')}/checkout`, {
      method: 'POST',
      headers: {
        'x-deployment-id': 'shop',
        'deploymentAccess.deploymentId': 'shop',
        'content-type': 'application/json',
      },
      body: forged,
    });
    expect(res.status).toBe(500);
    expect(((await res.json()) as { code: string }).code).toBe('AGENT_STEP_FAILED');
    expect((await t.runtime.triggerStep('intruder', 'forge'))?.errors.join()).toContain(
      'AGENT_DEPLOYMENT_ACCESS_DENIED',
    );
    expect(t.logs('billing')).toEqual([]);
    // Through a grant that takes any deployment, the callee still sees who really called.
    expect((await t.runtime.triggerStep('intruder', 'quote'))?.body).toBe('42 for intruder');
    expect(t.logs('billing')).toEqual(['quote ran']);
  });

  it('refuses without a call entry of that id on the caller side (AGENT_DEPLOYMENT_ACCESS_DENIED, caller-grant)', async () => {
    const t = await startRuntime([
      caller('shop', { other: "context.sendToStep('from-shop', 'charge', '{}')" }),
      billing(),
    ]);
    expect((await t.runtime.triggerStep('shop', 'other'))?.errors.join()).toContain(
      'AGENT_DEPLOYMENT_ACCESS_DENIED',
    );
    expect(refusals(t)[0]).toMatchObject({ rule: 'caller-grant', accessId: 'from-shop' });
    expect(t.logs('billing')).toEqual([]);
  });

  it('refuses a step without a deploymentAccess trigger, or whose trigger lists another receive entry', async () => {
    const t = await startRuntime([
      caller('shop', {
        refund: "context.sendToStep('billing', 'refund', '{}')",
        missing: "context.sendToStep('billing', 'no-such-step', '{}')",
      }),
      caller('other', { charge: "context.sendToStep('billing', 'charge', '{\"amount\":1}')" }),
      billing(),
    ]);
    for (const [d, s] of [
      ['shop', 'refund'],
      ['shop', 'missing'],
      ['other', 'charge'],
    ] as const) {
      const r = await t.runtime.triggerStep(d, s);
      expect([d, s, r?.errors.join()]).toEqual([
        d,
        s,
        expect.stringContaining('AGENT_DEPLOYMENT_ACCESS_DENIED'),
      ]);
    }
    // One message whatever the receiving side lacks.
    const messages = refusals(t).map((l) => l['rule']);
    expect(messages).toEqual(['receiver-grant', 'receiver-grant', 'receiver-grant']);
    expect(t.logs('billing')).toEqual([]);
  });

  it('AGENT_DEPLOYMENT_UNAVAILABLE when no listed deployment is loaded; AGENT_DEPLOYMENT_CALL_AMBIGUOUS for two receivers', async () => {
    const t = await startRuntime([
      caller(
        'shop',
        {
          ghost: "context.sendToStep('ghost', 'charge', '{}')",
          both: "context.sendToStep('both', 'charge', '{\"amount\":1}')",
        },
        {
          allowDeploymentAccess: [
            { id: 'billing', access: 'call', deploymentIds: ['billing'] },
            { id: 'ghost', access: 'call', deploymentId: 'not-here' },
            { id: 'both', access: 'call', deploymentIds: ['billing', 'billing-eu'] },
          ],
        },
      ),
      billing(),
      { ...billing(), id: 'billing-eu' },
    ]);
    expect((await t.runtime.triggerStep('shop', 'ghost'))?.errors.join()).toContain(
      'AGENT_DEPLOYMENT_UNAVAILABLE',
    );
    expect((await t.runtime.triggerStep('shop', 'both'))?.errors.join()).toContain(
      'AGENT_DEPLOYMENT_CALL_AMBIGUOUS',
    );
    expect(t.logs('billing')).toEqual([]);
    expect(t.logs('billing-eu')).toEqual([]);
  });

  // 1.0 s in a CI run on 2 shared cores (real servers, child processes or sandbox workers): an explicit timeout.
  it(
    'ends a ping-pong between two deployments at the send depth (ENGINE_SEND_DEPTH)',
    { timeout: 10_000 },
    async () => {
      const bouncer = (id: string, other: string): TestDeployment => ({
        id,
        workflow: wf(
          step(
            'bounce',
            `console.log('bounce'); const r = context.sendToStep('${other}', 'bounce', 'x'); context.setBody(r.isErrored() ? r.getAllErrors().join() : r.getBody());`,
            { deploymentAccess: { ids: ['in'] } },
          ),
        ),
        record: {
          allowDeploymentAccess: [
            { id: other, access: 'call', deploymentIds: [other] },
            { id: 'in', access: 'receive', deploymentIds: [other] },
          ],
        },
      });
      const t = await startRuntime([bouncer('ping', 'pong'), bouncer('pong', 'ping')]);
      const r = await t.runtime.triggerStep('ping', 'bounce');
      expect(r?.body).toContain('ENGINE_SEND_DEPTH');
      expect(t.logs('ping').length + t.logs('pong').length).toBe(9);
    },
  );

  it('one id for a call and a receive entry: two deployments call each other through it, directions never mix', async () => {
    const peer = (id: string, other: string): TestDeployment => ({
      id,
      workflow: wf(
        step(
          'answer',
          `console.log('answer'); context.setBody('${id} answers ' + context.getProperty('deploymentAccess.deploymentId') + ' via ' + context.getProperty('deploymentAccess.id'));`,
          { deploymentAccess: { ids: ['peer'] } },
        ),
        step(
          'ask',
          "const r = context.sendToStep('peer', 'answer', 'q'); context.setBody(r.isErrored() ? r.getAllErrors().join() : r.getBody());",
        ),
      ),
      record: {
        allowDeploymentAccess: [
          { id: 'peer', access: 'call', deploymentIds: [other] },
          { id: 'peer', access: 'receive', deploymentIds: [other] },
        ],
      },
    });
    // Only a receive entry "peer": its trigger works, but it cannot call out through "peer".
    const listener: TestDeployment = {
      ...peer('listener', 'left'),
      record: { allowDeploymentAccess: [{ id: 'peer', access: 'receive', deploymentIds: ['left'] }] },
    };
    const t = await startRuntime([peer('left', 'right'), peer('right', 'left'), listener]);
    expect((await t.runtime.triggerStep('left', 'ask'))?.body).toBe('right answers left via peer');
    expect((await t.runtime.triggerStep('right', 'ask'))?.body).toBe('left answers right via peer');
    expect(t.logs('left')).toEqual(['answer']);
    expect(t.logs('right')).toEqual(['answer']);
    expect((await t.runtime.triggerStep('listener', 'ask'))?.errors.join()).toContain(
      'AGENT_DEPLOYMENT_ACCESS_DENIED',
    );
    expect(refusals(t)).toEqual([
      expect.objectContaining({ deploymentId: 'listener', rule: 'caller-grant' }),
    ]);
    expect(t.logs('listener')).toEqual([]);
  });

  it('refuses a deploymentAccess trigger id that is not a receive entry at start-up (AGENT_TRIGGER_INVALID)', async () => {
    const bad: TestDeployment = {
      id: 'b',
      workflow: wf(step('s', "context.setBody('x')", { deploymentAccess: { ids: ['to-a'] } })),
      record: { allowDeploymentAccess: [{ id: 'to-a', access: 'call', deploymentIds: ['a'] }] },
    };
    await expect(startRuntime([bad])).rejects.toMatchObject({ code: 'AGENT_TRIGGER_INVALID' });
  });
});

describe('startupPriority and deferLoading', () => {
  it('loads deployments lower startupPriority first, ties in bootstrap order', async () => {
    const d = (id: string, record: Record<string, unknown>): TestDeployment => ({
      id,
      workflow: wf(step('s', "context.setBody('x')")),
      record,
    });
    const t = await startRuntime([
      d('late', { startupPriority: 5 }),
      d('default-a', {}),
      d('early', { startupPriority: -1 }),
      d('default-b', { startupPriority: 0 }),
    ]);
    const loaded = t
      .lines()
      .filter((l) => l['msg'] === 'deployment loaded')
      .map((l) => l['deploymentId']);
    expect(loaded).toEqual(['early', 'default-a', 'default-b', 'late']);
  });

  it('wires a deferLoading deployment at start and creates its engine (and stores) on the first call', async () => {
    const deferred = billing({ deferLoading: true, persistenceRoot: 'billing' });
    const charge = deferred.workflow as { workflows: { steps: Record<string, unknown>[] }[] };
    charge.workflows[0]!.steps[0]!['persistenceFile'] = 'charges.db';
    const t = await startRuntime([
      caller('shop', { pay: "context.sendToStep('billing', 'charge', '{\"amount\":3}')" }),
      deferred,
    ]);
    expect(
      t.lines().find((l) => l['msg'] === 'deployment loaded' && l['deploymentId'] === 'billing'),
    ).toMatchObject({
      deferred: true,
      steps: 3,
    });
    const store = join(t.dataDir, 'billing', 'charges.db');
    expect(existsSync(store)).toBe(false);
    const r = await t.runtime.triggerStep('shop', 'pay');
    expect(JSON.parse(String(r?.body))).toEqual({ charged: 3, caller: 'shop', via: 'from-shop' });
    expect(t.logs('billing')).toEqual(['charge ran']);
    expect(existsSync(store)).toBe(true);
  });
});

describe('S167 a deferLoading deployment loading (issue 27)', () => {
  // 120 steps with a store each, created on the first call: 1–3 s of loading on this machine, cut at 100 ms.
  it(
    'cuts a call at startupWaitTimeoutMs while the target loads, and the loading never holds the event loop long',
    { timeout: 30_000 },
    async () => {
      const deferred = billing({ deferLoading: true, persistenceRoot: 'billing' });
      const steps = (deferred.workflow as { workflows: { steps: Record<string, unknown>[] }[] }).workflows[0]!
        .steps;
      for (let i = 0; i < 120; i++)
        steps.push({ ...step(`kept${i}`, "context.setBody('x')"), persistenceFile: `s${i}.db` });
      const t = await startRuntime([
        caller(
          'shop',
          { pay: "context.sendToStep('billing', 'charge', '{\"amount\":3}')" },
          {
            allowDeploymentAccess: [
              { id: 'billing', access: 'call', deploymentIds: ['billing'], startupWaitTimeoutMs: 100 },
            ],
          },
        ),
        deferred,
      ]);
      let gap = 0;
      let last = performance.now();
      const tick = setInterval(() => {
        const now = performance.now();
        gap = Math.max(gap, now - last);
        last = now;
      }, 5);
      try {
        const started = performance.now();
        const r = await t.runtime.triggerStep('shop', 'pay');
        const took = performance.now() - started;
        expect(r?.errors.join(' ')).toContain('did not finish loading within 100 ms');
        // The wait is 100 ms; the rest is the caller's own first run (its sandbox compiling the script), 0.1–0.3 s
        // here. Before the fix the call waited for the whole load (3.4 s) and was not cut.
        expect(took).toBeLessThan(1500);
        expect(refusals(t)).toMatchObject([{ code: 'AGENT_DEPLOYMENT_UNAVAILABLE', rule: 'startup-wait' }]);
        // Meanwhile the loading goes on in slices; wait for it, watching the event loop.
        const second = await t.runtime.triggerStep('shop', 'pay');
        for (let i = 0; i < 200 && String(second?.body).includes('UNAVAILABLE'); i++) {
          await new Promise((resolve) => setTimeout(resolve, 50));
          if (!String((await t.runtime.triggerStep('shop', 'pay'))?.body).includes('UNAVAILABLE')) break;
        }
        // One LMDB environment opens in 2–30 ms; before the fix the whole load (120 stores) ran in one turn.
        expect(gap).toBeLessThan(400);
      } finally {
        clearInterval(tick);
      }
    },
  );
});
