import { expect } from 'vitest';
import { isCodedError } from './index.js';

/** A class of coded errors (its `name` is what is compared). */
export type ErrorClass = abstract new (...args: never[]) => Error;

/** The matchers this module adds to vitest's `expect`. */
export interface CodeMatchers<R = unknown> {
  /** Passes when the function throws (or the promise rejects with) an error of that class name and code. */
  toThrowCode(errorClass: ErrorClass | string, code: string): R;
}

declare module 'vitest' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type, @typescript-eslint/no-explicit-any
  interface Assertion<T = any> extends CodeMatchers<T> {}
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  interface AsymmetricMatchersContaining extends CodeMatchers {}
}

function className(c: ErrorClass | string): string {
  return typeof c === 'string' ? c : c.name;
}

function describe(err: unknown): string {
  if (err === undefined) return 'nothing was thrown';
  if (isCodedError(err)) return `${err.name} ${err.code}`;
  if (err instanceof Error) return `${err.name}: ${err.message}`;
  return `non-error ${typeof err}`;
}

function judge(err: unknown, cls: string, code: string) {
  const pass = isCodedError(err, cls, code);
  return {
    pass,
    message: () =>
      pass
        ? `expected not to throw ${cls} ${code}`
        : `expected ${cls} with code ${code}, but ${describe(err)}`,
  };
}

expect.extend({
  toThrowCode(received: unknown, errorClass: ErrorClass | string, code: string) {
    const cls = className(errorClass);
    if (received instanceof Promise) {
      return received.then(
        () => judge(undefined, cls, code),
        (err: unknown) => judge(err, cls, code),
      );
    }
    if (typeof received !== 'function') return judge(received, cls, code);
    let err: unknown;
    try {
      const out: unknown = (received as () => unknown)();
      if (out instanceof Promise) {
        return out.then(
          () => judge(undefined, cls, code),
          (e: unknown) => judge(e, cls, code),
        );
      }
    } catch (e) {
      err = e;
    }
    return judge(err, cls, code);
  },
});
