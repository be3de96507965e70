/** A coded error from one of our packages or an app, as the problem writers read it (duck-typed). */
export interface CodedError<C extends string = string> {
  readonly name: string;
  readonly code: C;
  readonly message: string;
  readonly details?: unknown;
  /** Extra response headers (such as `Allow`). */
  readonly headers?: Readonly<Record<string, string>> | undefined;
}

/**
 * A guard for the coded errors an app answers: `name` one of the known class names, `code` a key of the app's
 * status table, `message` a string. Duck-typed on purpose: two copies of a package may be loaded, and
 * `instanceof` would miss the other copy's errors.
 */
export function codedErrorGuard<C extends string>(
  names: readonly string[],
  statusByCode: Readonly<Record<C, number>>,
): (err: unknown) => err is CodedError<C> {
  const known = new Set(names);
  return (err: unknown): err is CodedError<C> => {
    if (typeof err !== 'object' || err === null) return false;
    const e = err as { name?: unknown; code?: unknown; message?: unknown };
    return (
      typeof e.name === 'string' &&
      known.has(e.name) &&
      typeof e.code === 'string' &&
      Object.hasOwn(statusByCode, e.code) &&
      typeof e.message === 'string'
    );
  };
}
