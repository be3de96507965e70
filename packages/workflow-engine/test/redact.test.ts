import { describe, expect, it } from 'vitest';
import { REDACTED, SecretSet } from '../src/redact.js';

describe('SecretSet', () => {
  it('forwards a value and its Base64 forms and scrubs all of them', () => {
    const forwarded: string[] = [];
    const set = new SecretSet((v) => forwarded.push(v));
    set.add('hunter2-secret');
    expect(forwarded).toEqual(['hunter2-secret', 'aHVudGVyMi1zZWNyZXQ=', 'aHVudGVyMi1zZWNyZXQ']);
    expect(set.scrub('a hunter2-secret b aHVudGVyMi1zZWNyZXQ= c')).toBe(`a ${REDACTED} b ${REDACTED} c`);
  });

  it('registers string leaves of restricted data and leaves short values unscrubbed', () => {
    const set = new SecretSet(() => undefined);
    set.addLeaves({ a: 'abc', b: { c: ['longer-value'] } });
    expect(set.scrub('abc longer-value')).toBe(`abc ${REDACTED}`);
  });

  it('never leaves part of a secret at a cut', () => {
    const set = new SecretSet(() => undefined);
    set.add('0123456789');
    expect(set.scrubPrefix('xxxxx0123456789', 8)).toBe('xxxxx[RE');
  });
});
