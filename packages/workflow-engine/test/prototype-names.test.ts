import { PROTOTYPE_NAMES } from '@org/test-utils';
import { describe, expect, it } from 'vitest';
import { createWorkflowEngine } from '../src/index.js';
import { fakeHost, input, scriptStep, workflow } from './fake-host.js';

// Regression: property and header lookups in the sandbox read inherited properties of plain objects, so
// `getProperty('toString')` answered a function and `setHeader('__proto__', …)` replaced a prototype.

async function run(steps: unknown[], stepId = 's', inp = input('in')) {
  const engine = await createWorkflowEngine(workflow(steps), { host: fakeHost(), data: {} });
  const result = await engine.runStep(stepId, inp);
  expect(result.errors).toEqual([]);
  return result;
}

/** A script expression: `[property, header]` of `n` through `get`, non-strings shown by their type. */
const pair = (n: string, on = 'context') =>
  `JSON.stringify([${on}.getProperty(${n}), ${on}.getHeader(${n})].map((v) => v === null || typeof v === 'string' ? v : typeof v))`;

describe.each(PROTOTYPE_NAMES)('the name %s', (name) => {
  const n = JSON.stringify(name);

  it('is unset in getProperty and getHeader of a fresh run', async () => {
    const r = await run([scriptStep('s', `context.setBody(${pair(n)})`)]);
    expect(r.body).toBe('[null,null]');
  });

  it('is an ordinary property and header once set, and in the step result', async () => {
    const r = await run([
      scriptStep(
        's',
        `context.setProperty(${n}, 'v'); context.setHeader(${n}, 'h');` + `context.setBody(${pair(n)})`,
      ),
    ]);
    expect(r.body).toBe(JSON.stringify(['v', '["h"]']));
    expect(Object.hasOwn(r.properties, name) && r.properties[name]).toBe('v');
    expect(Object.hasOwn(r.headers, name) && r.headers[name]).toBe('h');
  });

  it('is unset in the result of sendToStep', async () => {
    const r = await run(
      [
        scriptStep('caller', `const r = context.sendToStep('callee', 'x'); context.setBody(${pair(n, 'r')})`),
        scriptStep('callee', "context.setBody('y')"),
      ],
      'caller',
    );
    expect(r.body).toBe('[null,null]');
  });

  it('arrives as an ordinary inbound property and header', async () => {
    const r = await run(
      [scriptStep('s', `context.setBody(${pair(n)})`)],
      's',
      input('in', { properties: { [name]: 'p' }, headers: { [name]: ['i'] } }),
    );
    expect(r.body).toBe(JSON.stringify(['p', '["i"]']));
  });
});
