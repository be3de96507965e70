import { describe, expect, it } from 'vitest';
import * as api from '../src/index.js';

describe('errors', () => {
  it('exposes one coded error class whose name equals the class name', () => {
    const [Cls] = Object.values(api).filter((v) => typeof v === 'function') as (new (c: string, m: string) => Error & { code: string })[];
    const e = new Cls!(Object.values(api).flat().find((v) => typeof v === 'string') as string, 'm');
    expect(e.name).toBe(Cls!.name);
    expect(typeof e.code).toBe('string');
  });
});
