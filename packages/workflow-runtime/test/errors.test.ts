import { describe, expect, it } from 'vitest';
import { AGENT_ERROR_CODES, AgentError, isAgentError } from '../src/index.js';

describe('isAgentError', () => {
  it('is a membership check of the frozen AGENT_ERROR_CODES', () => {
    expect(Object.isFrozen(AGENT_ERROR_CODES)).toBe(true);
    for (const code of AGENT_ERROR_CODES) expect(isAgentError(new AgentError(code, 'm'))).toBe(true);
    // Another loaded copy of the package: same name and code, another class.
    expect(isAgentError({ name: 'AgentError', code: AGENT_ERROR_CODES[0], message: 'm' })).toBe(true);
  });
  it('refuses an unknown code, another class name, a prefix-only match and non-objects', () => {
    const prefix = AGENT_ERROR_CODES[0].split('_')[0]!;
    expect(isAgentError({ name: 'AgentError', code: `${prefix}_NOT_A_CODE` })).toBe(false);
    expect(isAgentError({ name: 'Error', code: AGENT_ERROR_CODES[0] })).toBe(false);
    expect(isAgentError(Object.assign(new Error('m'), { code: AGENT_ERROR_CODES[0] }))).toBe(false);
    expect(isAgentError(null)).toBe(false);
    expect(isAgentError(AGENT_ERROR_CODES[0])).toBe(false);
  });
});

describe('error classes of this package', () => {
  it('carry their own names only: a host-policy failure is a real PolicyError, never a look-alike', async () => {
    const { readdirSync, readFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const names = new Set<string>();
    const walk = (dir: string): void => {
      for (const e of readdirSync(dir, { withFileTypes: true })) {
        if (e.isDirectory()) walk(join(dir, e.name));
        else if (e.name.endsWith('.ts'))
          for (const m of readFileSync(join(dir, e.name), 'utf8').matchAll(/readonly name = '(\w+)'/g))
            names.add(m[1]!);
      }
    };
    walk(join(import.meta.dirname, '..', 'src'));
    expect([...names].sort()).toEqual(['AgentError', 'FrameTooLargeError']);
  });
});
