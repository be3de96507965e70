// Issue 28 §3: docs/compatibility.md names every context call of the engine, every record field the agent ignores
// and every deliberate difference, so the table cannot silently fall behind the code.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { codeSpans, declaredStrings, missingFrom, specCallNames } from '../src/compatibility-doc.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const read = (path: string): string => readFileSync(join(ROOT, path), 'utf8');
const DOC = read('docs/compatibility.md');

describe('the readers', () => {
  it('take call names from SPEC.md code spans, members and slash lists included, built-ins left out', () => {
    const spec =
      '## 2. x\n`early()`\n## 3. Body\n| `getBody()`, `.setIfLastest(k, ts)` | `{ get(k), put(k, v) }` |\n' +
      '`console.log/info(...)` `String(x)` `Error(m)` `runStep(…)`\n## 8. Secrets\n`late()`';
    expect(specCallNames(spec)).toEqual(['get', 'getBody', 'info', 'log', 'put', 'setIfLastest']);
  });

  it('read an exported array literal, empty or not, and fail on a shape they cannot read', () => {
    expect(declaredStrings('export const A: readonly X[] = Object.freeze([]);', 'A')).toEqual([]);
    expect(declaredStrings("export const A = [\n  'a.b',\n  // 'no'\n  'c',\n];", 'A')).toEqual(['a.b', 'c']);
    expect(declaredStrings("export const A = [\n  { id: 'x', detail: 'y' },\n];", 'A', 'id')).toEqual(['x']);
    expect(() => declaredStrings("export const A = [\n  { call: 'x' },\n];", 'A', 'id')).toThrow(/no id/);
    expect(() => declaredStrings('export const B = [];', 'A')).toThrow(/not found/);
  });

  it('find a name as a code span, a word of one or a segment of a dotted path', () => {
    const doc = '`a.b.c` and `console.log/info(...)`, `x-y`; plain z';
    expect(missingFrom(doc, ['a.b.c', 'b', 'log', 'info', 'x-y', 'z'])).toEqual(['z']);
    expect(codeSpans(doc)).toHaveLength(3);
  });
});

describe('docs/compatibility.md', () => {
  it('names every context call of the engine SPEC.md and of UNSUPPORTED_CONTEXT_CALLS', () => {
    const calls = specCallNames(read('packages/workflow-engine/SPEC.md'));
    expect(calls.length).toBeGreaterThan(100);
    expect(calls).toEqual(
      expect.arrayContaining(['getBody', 'setIfLastest', 'callAuthenticationHost', 'put']),
    );
    const unsupported = declaredStrings(
      read('packages/workflow-engine/src/unsupported.ts'),
      'UNSUPPORTED_CONTEXT_CALLS',
      'call',
    );
    expect(missingFrom(DOC, [...calls, ...unsupported])).toEqual([]);
  });

  it('names every record field the agent reports as ignored, and every deliberate difference', () => {
    const report = read('packages/workflow-runtime/src/start-up-report.ts');
    const ignored = declaredStrings(report, 'IGNORED_RECORD_FIELDS');
    const differences = declaredStrings(report, 'DELIBERATE_DIFFERENCES', 'id');
    expect(ignored).toContain('licensing');
    expect(differences).toContain('http-request-body');
    expect(missingFrom(DOC, [...ignored, ...differences])).toEqual([]);
  });
});
