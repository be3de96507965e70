/**
 * What the generated-validators tests of this package, @org/workflow-test-runner and @org/packager share: the check
 * that the committed src/generated files are what the generator writes now, and the comparison of the standalone
 * validators (standalone.ts) with the same schemas compiled at run time, over inputs and variants of them. Each test
 * keeps its own inputs, wrong values and bounds. Used by tests only.
 */
import { readFileSync } from 'node:fs';
import { expect } from 'vitest';

/** A compiled schema: ajv's compiled functions and the generated standalone ones have this shape. */
export type Validate = ((data: unknown) => boolean) & { errors?: unknown };

/** Fails unless the files at `files` hold what `source` (a package's `validatorsSource`) writes now. */
export function expectCurrent(
  source: () => { js: string; dts: string },
  files: { js: string; dts: string },
): void {
  const { js, dts } = source();
  expect(readFileSync(files.js, 'utf8')).toBe(js);
  expect(readFileSync(files.dts, 'utf8')).toBe(dts);
}

/**
 * `value`, then for every position in it (bounded by `limit`): the value without that member, and with each of
 * `wrong` there; then a few values of the wrong shape, and `extra`.
 */
export function* variants(
  value: unknown,
  limit: number,
  wrong: unknown[],
  extra: unknown[] = [],
): Generator<unknown> {
  yield value;
  let n = 0;
  const paths: (string | number)[][] = [];
  const walk = (v: unknown, path: (string | number)[]): void => {
    paths.push(path);
    if (Array.isArray(v)) v.forEach((c, i) => walk(c, [...path, i]));
    else if (v !== null && typeof v === 'object')
      for (const [k, c] of Object.entries(v)) walk(c, [...path, k]);
  };
  walk(value, []);
  for (const path of paths) {
    if (path.length === 0) continue;
    for (const replacement of [undefined, ...wrong]) {
      if (n++ >= limit) return;
      const copy = structuredClone(value) as Record<string | number, unknown>;
      let parent = copy;
      for (const key of path.slice(0, -1)) parent = parent[key] as Record<string | number, unknown>;
      const last = path[path.length - 1]!;
      if (replacement === undefined) {
        if (Array.isArray(parent)) parent.splice(last as number, 1);
        else delete parent[last];
      } else parent[last] = replacement;
      yield copy;
    }
  }
  yield* [undefined, null, [], {}, [{}], 'x', 1, ...extra];
}

function outcome(validate: Validate, value: unknown): { valid: boolean; errors: unknown } {
  const valid = validate(value);
  return { valid, errors: valid ? null : validate.errors };
}

/**
 * Fails unless `generated` gives every input the verdict and errors (instancePath, keyword, params, message, ...)
 * that `runtime` gives it; how many inputs were tried and how many of them are invalid.
 */
export function expectSameOutcomes(
  runtime: Validate,
  generated: Validate,
  inputs: Iterable<unknown>,
): { tried: number; invalid: number } {
  let invalid = 0;
  let tried = 0;
  for (const input of inputs) {
    const expected = outcome(runtime, input);
    expect(outcome(generated, input)).toEqual(expected);
    tried++;
    if (!expected.valid) invalid++;
  }
  return { tried, invalid };
}
