import { Redactor, type StepResult, type WorkflowEngine } from '@org/workflow-engine';
import { describe, expect, it } from 'vitest';
import { DeferredEngine } from '../src/deployments/deferred-engine.js';
import { startupOrder } from '../src/deployments/grants.js';
import { DeploymentRegistry } from '../src/deployments/registry.js';
import { RunTracker } from '../src/http/run-tracker.js';
import { createOutput } from '../src/index.js';
import { recordsOf, step, wf } from './helpers.js';

// The registry on its own: startupWaitTimeoutMs against a deferLoading receiver whose engine is slow or broken.

const ok: StepResult = {
  status: undefined,
  body: 'done',
  headers: {},
  properties: {},
  errored: false,
  errors: [],
};
const fakeEngine = (steps: WorkflowEngine['steps']): WorkflowEngine => ({
  steps,
  runStep: () => Promise.resolve(ok),
  dispose: () => undefined,
});

function setup(wait: number | undefined, create: () => Promise<WorkflowEngine>) {
  const lines: string[] = [];
  const redactor = new Redactor();
  const registry = new DeploymentRegistry({
    output: createOutput((l) => lines.push(l), redactor),
    tracker: new RunTracker(),
    redactor,
  });
  const [caller, receiver] = recordsOf([
    {
      id: 'a',
      workflow: {},
      record: {
        allowDeploymentAccess: [
          {
            id: 'to-b',
            access: 'call',
            deploymentIds: ['b'],
            ...(wait === undefined ? {} : { startupWaitTimeoutMs: wait }),
          },
        ],
      },
    },
    {
      id: 'b',
      workflow: {},
      record: { allowDeploymentAccess: [{ id: 'in', access: 'receive', deploymentIds: ['a'] }] },
    },
  ]);
  const workflow = wf(step('s', 'x', { deploymentAccess: { ids: ['in'] } }));
  const deferred = new DeferredEngine(workflow, create);
  registry.add(caller!, fakeEngine([]));
  registry.add(receiver!, deferred);
  const send = () => registry.send('a', { accessId: 'to-b', stepId: 's', body: 'x', depth: 1 });
  return { registry, deferred, send, lines, workflow };
}

describe('DeploymentRegistry startupWaitTimeoutMs', () => {
  it('gives up on a receiver still loading after startupWaitTimeoutMs (AGENT_DEPLOYMENT_UNAVAILABLE)', async () => {
    const { send, lines } = setup(20, () => new Promise(() => undefined));
    await expect(send()).rejects.toMatchObject({ code: 'AGENT_DEPLOYMENT_UNAVAILABLE' });
    expect(lines.join()).toContain('"rule":"startup-wait"');
  });

  it('waits for the receiver to finish loading, then runs the step once it is there', async () => {
    let finish: (e: WorkflowEngine) => void = () => undefined;
    const { send, deferred } = setup(undefined, () => new Promise((r) => (finish = r)));
    const pending = send();
    await new Promise((r) => setImmediate(r));
    expect(deferred.isBuilt).toBe(false);
    finish(fakeEngine(deferred.steps));
    await expect(pending).resolves.toMatchObject({ body: 'done', errored: false });
    expect(deferred.isBuilt).toBe(true);
  });

  it('reports a receiver that cannot be loaded, with its code', async () => {
    const failing = () =>
      Promise.reject(
        Object.assign(new Error('corrupt'), { name: 'EngineError', code: 'ENGINE_PERSISTENCE_CORRUPT' }),
      );
    const { send } = setup(1000, failing);
    await expect(send()).rejects.toMatchObject({
      code: 'AGENT_DEPLOYMENT_UNAVAILABLE',
      message: expect.stringContaining('ENGINE_PERSISTENCE_CORRUPT'),
    });
  });

  it('refuses every call after stop()', async () => {
    const { registry, send } = setup(undefined, () => Promise.resolve(fakeEngine([])));
    registry.stop();
    await expect(send()).rejects.toMatchObject({ code: 'AGENT_DEPLOYMENT_UNAVAILABLE' });
  });
});

describe('startupOrder', () => {
  it('sorts by startupPriority (absent or not a number: 0), keeping bootstrap order for ties', () => {
    const d = (deploymentId: string, startupPriority?: unknown) => ({
      record: { deploymentId, remoteConfiguration: 'x', startupPriority },
    });
    const order = startupOrder([d('a', 2), d('b'), d('c', -3), d('d', 'high'), d('e', 0)]);
    expect(order.map((x) => x.record.deploymentId)).toEqual(['c', 'b', 'd', 'e', 'a']);
  });
});
