import fc from 'fast-check';

/** JSON values this package accepts: safe integers, finite doubles, well-formed strings, bounded depth. */
export const jsonValue: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    fc.maxSafeInteger(),
    fc
      .double({ noNaN: true, noDefaultInfinity: true })
      .filter((d) => !Number.isInteger(d) || Number.isSafeInteger(d))
      .map((d) => (d === 0 ? 0 : d)), // JSON has no -0
    fc.string({ unit: 'grapheme', maxLength: 12 }),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.string({ unit: 'grapheme', maxLength: 8 }), tie('value'), {
      maxKeys: 4,
      noNullPrototype: true,
    }),
  ),
})).value;

const script = fc.string({ unit: 'grapheme', maxLength: 40 });
const processor: fc.Arbitrary<Record<string, unknown>> = fc.letrec((tie) => ({
  p: fc.oneof(
    { depthSize: 'small' },
    fc.record({ script }, { requiredKeys: ['script'] }),
    fc.record({
      script,
      comment: fc.string({ maxLength: 10 }),
      data: fc.dictionary(fc.string({ maxLength: 6 }), jsonValue, { maxKeys: 3, noNullPrototype: true }),
    }),
    fc.record({ processors: fc.array(tie('p'), { minLength: 1, maxLength: 3 }) }),
  ),
})).p;

const trigger = fc.oneof(
  fc.record({ runOnce: fc.boolean() }),
  fc.record({ timer: fc.record({ period: fc.integer({ min: 1, max: 86_400_000 }), delay: fc.nat() }) }),
  fc.record({
    http: fc.record({
      server: fc.constant('api'),
      path: fc.constantFrom('/a', '/b/.*'),
      method: fc.constantFrom('GET', 'POST'),
      multiPartUploadByteLimit: fc.integer({ min: 1, max: 2 ** 40 }),
    }),
  }),
);

/** Small, schema-valid workflow files with inline scripts only (no file system needed). */
export const workflowFile: fc.Arbitrary<Record<string, unknown>> = fc
  .record({
    comment: fc.option(fc.string({ maxLength: 20 }), { nil: undefined }),
    data: fc.option(
      fc.dictionary(fc.string({ maxLength: 6 }), jsonValue, { maxKeys: 3, noNullPrototype: true }),
      { nil: undefined },
    ),
    steps: fc.array(
      fc.record({ trigger: fc.option(trigger, { nil: undefined }), resultsProcessor: processor }),
      { minLength: 1, maxLength: 4 },
    ),
  })
  .map(({ comment, data, steps }) => {
    const wf: Record<string, unknown> = {
      workflows: [{ name: 'w', steps: steps.map((s, i) => clean({ stepId: `step-${i}`, ...s })) }],
    };
    if (comment !== undefined) wf['comment'] = comment;
    if (data !== undefined) wf['data'] = data;
    return wf;
  });

function clean(o: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
}

/** Re-serialises a value with members in a seed-dependent order and seed-dependent whitespace. */
export function reformat(value: unknown, seed: number): string {
  let state = seed >>> 0 || 1;
  const next = (): number => (state = (Math.imul(state, 1103515245) + 12345) >>> 0);
  const ws = (): string => [' ', '\n', '\t', '\r\n  ', ''][next() % 5]!;
  const write = (v: unknown): string => {
    if (Array.isArray(v)) return `[${ws()}${v.map(write).join(`,${ws()}`)}${ws()}]`;
    if (typeof v === 'object' && v !== null) {
      const keys = Object.keys(v).sort(() => (next() % 2 === 0 ? -1 : 1));
      return `{${ws()}${keys.map((k) => `${JSON.stringify(k)}${ws()}:${ws()}${write((v as Record<string, unknown>)[k])}`).join(`,${ws()}`)}${ws()}}`;
    }
    return JSON.stringify(v);
  };
  return write(value);
}
