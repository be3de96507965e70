import { describe, expect, it } from 'vitest';
import {
  MAX_SECRETS_FILE_BYTES,
  WorkflowError,
  parseSecretsFile,
  substituteVariables,
  validateBootstrapWithVariables,
} from '../src/index.js';

const SECRET = 's3cr3t-Value-9f2c';
const vars = new Map<string, string>([
  ['A', 'alpha'],
  ['B', 'beta'],
  ['TOKEN', SECRET],
  ['EMPTY', ''],
  ['_x1', 'under'],
  ['INJECT', '", "admin": true, "x": "'],
  ['NESTED', '${A}'],
  ['PORT', '8080'],
  ['FLAG', 'false'],
  ['HALF', '1.5'],
  ['HUGE', '9007199254740993'],
]);

function sub(text: string): unknown {
  return substituteVariables({ v: text }, vars).value;
}

function caught(fn: () => unknown): WorkflowError {
  try {
    fn();
  } catch (e) {
    return e as WorkflowError;
  }
  throw new Error('expected a throw');
}

describe('substituteVariables', () => {
  it.each([
    ['${A}', 'alpha'],
    ['Bearer ${TOKEN}', `Bearer ${SECRET}`],
    ['${A}${B}', 'alphabeta'],
    ['${A}-${B}-${A}', 'alpha-beta-alpha'],
    ['x${EMPTY}y', 'xy'],
    ['${_x1}', 'under'],
    ['no reference', 'no reference'],
    ['$A', '$A'],
    ['$5 and $$', '$5 and $$'],
    ['a$', 'a$'],
    ['$${A}', '${A}'],
    // Left to right: "$" then the escape "$${", so a "$" right before a reference cannot be written.
    ['$$${A}', '$${A}'],
    ['$${', '${'],
    ['pre $${A} ${A}', 'pre ${A} alpha'],
    ['${NESTED}', '${A}'],
    ['{A}', '{A}'],
  ])('%j → %j', (input, expected) => {
    expect(sub(input)).toEqual({ v: expected });
  });

  it.each([['${'], ['${A'], ['${}'], ['${ A }'], ['${1A}'], ['${A-B}'], ['x ${A.B} y'], ['${é}']])(
    'rejects the malformed reference %j with WORKFLOW_VARIABLE_INVALID naming the pointer',
    (input) => {
      const e = caught(() => substituteVariables({ deep: [{ v: input }] }, vars));
      expect(e.code).toBe('WORKFLOW_VARIABLE_INVALID');
      expect(e.message).toContain('/deep/0/v');
    },
  );

  it('names a missing variable and its pointer, and no value of any variable', () => {
    const e = caught(() =>
      substituteVariables({ a: `${SECRET}`, b: { c: 'Bearer ${TOKEN} ${NOT_SET}' } }, vars),
    );
    expect(e).toBeInstanceOf(WorkflowError);
    expect(e.code).toBe('WORKFLOW_VARIABLE_MISSING');
    expect(e.message).toContain('NOT_SET');
    expect(e.message).toContain('(at /b/c)');
    // Regression: pointers in errors were built under an internal wrapper and began with an extra "/0".
    expect(e.details).toEqual({ errors: [{ pointer: '/b/c', detail: 'variable NOT_SET is not set' }] });
    const all = `${e.message} ${JSON.stringify(e.details)}`;
    for (const value of vars.values()) if (value.length > 2) expect(all).not.toContain(value);
  });

  it('leaves object member names alone and substitutes inside arrays and nested data', () => {
    const r = substituteVariables({ '${A}': ['${A}', 1, true, null, { k: '${B}' }] }, vars);
    expect(r.value).toEqual({ '${A}': ['alpha', 1, true, null, { k: 'beta' }] });
    expect(r.used).toEqual(['A', 'B']);
  });

  it('keeps a value that looks like JSON one plain string (no JSON injection)', () => {
    const r = substituteVariables(JSON.parse('{"role":"${INJECT}","admin":false}'), vars);
    expect(r.value).toEqual({ role: '", "admin": true, "x": "', admin: false });
  });

  it('does not modify its input and reports whole references only', () => {
    const input = { a: '${A}', b: 'x${B}', c: ['${PORT}'] };
    const copy = structuredClone(input);
    const r = substituteVariables(input, vars);
    expect(input).toEqual(copy);
    expect(r.whole.map((w) => w.pointer)).toEqual(['/a', '/c/0']);
  });

  it('refuses a forbidden name even when it is set', () => {
    const e = caught(() => substituteVariables({ v: '${A}' }, vars, { forbidden: new Set(['A']) }));
    expect(e.code).toBe('WORKFLOW_VARIABLE_INVALID');
    expect(e.message).not.toContain('alpha');
  });

  it('caps the text substitutions add (WORKFLOW_VARIABLE_TOO_LARGE)', () => {
    const many = { v: Array.from({ length: 10 }, () => '${TOKEN}') };
    expect(() => substituteVariables(many, vars, { maxAddedChars: 5 * SECRET.length })).toThrowCode(
      WorkflowError,
      'WORKFLOW_VARIABLE_TOO_LARGE',
    );
    expect(substituteVariables(many, vars, { maxAddedChars: 10 * SECRET.length }).used).toEqual(['TOKEN']);
  });
});

describe('validateBootstrapWithVariables', () => {
  const record = (extra: object) => ({ deploymentId: 'd', remoteConfiguration: 'x.oapp', ...extra });

  it('substitutes before the schema: stringBoolean and whole-reference numbers', () => {
    const { bootstrap, used } = validateBootstrapWithVariables(
      record({
        enabled: '${FLAG}',
        allowHttpServerAccess: [{ id: 'api', port: '${PORT}' }],
        scriptTimeoutMs: '${PORT}',
        data: { port: '${PORT}', label: 'p${PORT}' },
      }),
      vars,
    );
    expect(bootstrap[0]!.enabled).toBe('false');
    expect(bootstrap[0]!.allowHttpServerAccess![0]!.port).toBe(8080);
    expect(bootstrap[0]!.scriptTimeoutMs).toBe(8080);
    // data is free-form: a string stays a string.
    expect(bootstrap[0]!.data).toEqual({ port: '8080', label: 'p8080' });
    expect(used.sort()).toEqual(['FLAG', 'PORT']);
  });

  it.each([
    ['a stringBoolean that is not true/false', { enabled: '${A}' }],
    ['a non-integer port', { allowHttpServerAccess: [{ id: 'api', port: '${HALF}' }] }],
    ['an unsafe integer', { allowHttpServerAccess: [{ id: 'api', port: '${HUGE}' }] }],
    ['a partial reference in a number field', { allowHttpServerAccess: [{ id: 'api', port: '1${PORT}' }] }],
  ])('rejects %s with WORKFLOW_BOOTSTRAP_INVALID', (_what, extra) => {
    expect(() => validateBootstrapWithVariables(record(extra), vars)).toThrowCode(
      WorkflowError,
      'WORKFLOW_BOOTSTRAP_INVALID',
    );
  });

  it('reads a literal "$${" as text, so it never counts as an unresolved placeholder value', () => {
    const { bootstrap } = validateBootstrapWithVariables(record({ data: { t: '$${A}' } }), vars);
    expect(bootstrap[0]!.data).toEqual({ t: '${A}' });
  });
});

describe('parseSecretsFile', () => {
  const enc = (s: string) => new TextEncoder().encode(s);

  it.each([
    ['A=1', { A: '1' }],
    ['A=1\nB=2\n', { A: '1', B: '2' }],
    ['A=1\r\nB=2\r\n', { A: '1', B: '2' }],
    ['# comment\n\n   \n  # indented comment\nA=1', { A: '1' }],
    ['export A=1\nexport\tB=2', { A: '1', B: '2' }],
    ['  A = spaced value  ', { A: 'spaced value' }],
    ['A="  kept  "', { A: '  kept  ' }],
    ["A=' # not a comment '", { A: ' # not a comment ' }],
    ['A=value # kept', { A: 'value # kept' }],
    ['A=', { A: '' }],
    ['A=""', { A: '' }],
    ['A=a=b=c', { A: 'a=b=c' }],
    ['A="quoted "inside""', { A: 'quoted "inside"' }],
    ['A=${B}', { A: '${B}' }],
    ['export=1', { export: '1' }],
    ['\uFEFFA=1', { A: '1' }],
    ['{"A":"1","B_2":"two"}', { A: '1', B_2: 'two' }],
    ['  \n {"A":"x=y"}\n', { A: 'x=y' }],
  ])('%j', (text, expected) => {
    expect(Object.fromEntries(parseSecretsFile(enc(text)))).toEqual(expected);
    expect(Object.fromEntries(parseSecretsFile(text))).toEqual(expected);
  });

  it.each([
    ['no equals sign', `just-a-${SECRET}`],
    ['a bad name', `1A=${SECRET}`],
    ['a name with a dash', `A-B=${SECRET}`],
    ['an unterminated quote', `A="${SECRET}`],
    ['a name set twice', `A=1\nA=${SECRET}`],
    ['a JSON array', `["${SECRET}"]`],
    ['a JSON non-string value', `{"A":{"v":"${SECRET}"}}`],
    ['a JSON bad name', `{"A B":"${SECRET}"}`],
    ['a value pasted as a JSON name', `{"${SECRET}":"x"}`],
    ['malformed JSON', `{"A":"${SECRET}"`],
    ['duplicate JSON member', `{"A":"x","A":"${SECRET}"}`],
    ['a NUL', `A=${SECRET}\u0000`],
  ])('rejects %s with WORKFLOW_SECRETS_FILE_INVALID and never echoes a value', (_what, text) => {
    const e = caught(() => parseSecretsFile(enc(text)));
    expect(e.code).toBe('WORKFLOW_SECRETS_FILE_INVALID');
    expect(e.message).not.toContain(SECRET);
  });

  it('names the line numbers of a duplicate', () => {
    expect(caught(() => parseSecretsFile('A=1\n# c\nA=2')).message).toContain('lines 1 and 3');
  });

  it('rejects bad UTF-8 and a file over the cap', () => {
    expect(() => parseSecretsFile(new Uint8Array([0x41, 0x3d, 0xc3, 0x28]))).toThrowCode(
      WorkflowError,
      'WORKFLOW_SECRETS_FILE_INVALID',
    );
    expect(() => parseSecretsFile(new Uint8Array(MAX_SECRETS_FILE_BYTES + 1).fill(0x23))).toThrowCode(
      WorkflowError,
      'WORKFLOW_SECRETS_FILE_INVALID',
    );
  });
});
