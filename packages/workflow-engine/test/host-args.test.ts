import { describe, expect, it } from 'vitest';
import { EngineError } from '../src/index.js';
import { integerArg, kindOf, numberArg, parseHostArgs, stringArg } from '../src/host-args.js';

describe('parseHostArgs', () => {
  it('refuses anything but a JSON array with ENGINE_BAD_ARGUMENT', () => {
    expect(parseHostArgs('[1,"a"]')).toEqual([1, 'a']);
    for (const json of ['{}', 'nope', '"a"', ''])
      expect(() => parseHostArgs(json)).toThrowCode(EngineError, 'ENGINE_BAD_ARGUMENT');
  });
});

describe('stringArg, numberArg, integerArg', () => {
  it('take their type only, never a string of digits for a number', () => {
    expect(stringArg('a', 'f: s')).toBe('a');
    expect(numberArg(1.5, 'f: n')).toBe(1.5);
    expect(integerArg(3, 'f: n', 0, 3)).toBe(3);
    for (const v of ['16', NaN, Infinity, null, undefined, {}])
      expect(() => numberArg(v, 'f: n')).toThrowCode(EngineError, 'ENGINE_BAD_ARGUMENT');
    for (const v of ['1', 1.5, -1, 4])
      expect(() => integerArg(v, 'f: n', 0, 3)).toThrowCode(EngineError, 'ENGINE_BAD_ARGUMENT');
    expect(() => stringArg(5, 'f: s')).toThrowCode(EngineError, 'ENGINE_BAD_ARGUMENT');
  });

  it('name the call, the argument, what it takes and what it got, never a string’s content', () => {
    expect(() => integerArg(1e9, 'randomBytes: n', 0, 65536)).toThrow(
      'randomBytes: n must be an integer from 0 to 65536, got 1000000000',
    );
    expect(() => numberArg('s3cr3t-value', 'sleep: ms')).toThrow(
      'sleep: ms must be a finite number, got a string',
    );
    expect([null, undefined, [], {}, true, 5n].map(kindOf)).toEqual([
      'null',
      'undefined',
      'an array',
      'an object',
      'a boolean',
      'a bigint',
    ]);
  });
});
