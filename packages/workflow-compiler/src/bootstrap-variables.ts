import { WorkflowError } from './errors.js';
import { isJsonObject, toJsonValue, toPointer, type JsonObject, type JsonValue } from './json-value.js';
import { parseStrictJson } from './strict-json.js';

/**
 * Bootstrap variables (SPEC.md §8.1, ADR 0059): `${NAME}` references inside bootstrap string values, and the
 * secrets file that supplies values beside the environment. Pure functions: the caller reads the environment
 * and the file.
 */

/** A variable name: an ASCII letter or `_`, then letters, digits or `_`. */
export const VARIABLE_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Names a bootstrap may never reference, even when set: the agent's own key material, which must stay out of
 * workflow-visible data (S51). The agent passes them as `forbidden`, and so does the test runner for test
 * bootstraps, so a test is refused exactly where the agent would refuse the bootstrap.
 */
export const FORBIDDEN_BOOTSTRAP_VARIABLES: ReadonlySet<string> = new Set([
  'AGENT_BOOTSTRAP_SECRETKEY',
  'AGENT_STRING_SECRETKEYS',
  'AGENT_BOOTSTRAP_PRIVATEKEY',
]);

/** Longest variable name accepted (a longer one is `WORKFLOW_VARIABLE_INVALID`). */
export const MAX_VARIABLE_NAME_LENGTH = 256;

/** Largest secrets file accepted (1 MiB). */
export const MAX_SECRETS_FILE_BYTES = 1024 * 1024;

/** Default cap on the characters all substitutions of one value may add (16 MiB of text). */
export const MAX_SUBSTITUTED_CHARS = 16 * 1024 * 1024;

/** Options of {@link substituteVariables}. */
export interface SubstituteVariablesOptions {
  /** Names that may never be referenced, even when set (the agent's own key variables). */
  forbidden?: ReadonlySet<string>;
  /** Cap on the characters all substitutions together may add. Default {@link MAX_SUBSTITUTED_CHARS}. */
  maxAddedChars?: number;
}

/** Where a string that was exactly one reference sits, so a caller may re-type it (a number field). */
export interface WholeReference {
  /** RFC 6901 pointer of the string. */
  pointer: string;
  /** The object or array that holds it. */
  parent: JsonObject | JsonValue[];
  key: string | number;
}

/** Result of {@link substituteVariables}. */
export interface SubstitutionResult {
  /** A copy of the input with every reference replaced (the input is not modified). */
  value: JsonValue;
  /** Every variable referenced, each once, in order of first use. */
  used: string[];
  /** Strings that were exactly one `${NAME}` and nothing else. */
  whole: WholeReference[];
}

const NAME_CHARS = /[A-Za-z0-9_]/;

function invalid(pointer: string, why: string): WorkflowError {
  return new WorkflowError('WORKFLOW_VARIABLE_INVALID', `bootstrap value at ${pointer || '/'}: ${why}`, {
    details: { errors: [{ pointer, detail: why }] },
  });
}

/** A name for a message: names are from the grammar, so safe; long ones are cut. */
function shown(name: string): string {
  return name.length > 64 ? `${name.slice(0, 64)}…` : name;
}

interface Scan {
  text: string;
  /** The name when `text` is exactly `${NAME}`. */
  whole: string | undefined;
}

/**
 * Replaces the references of one string. `$${` is a literal `${`; `${NAME}` is the value of NAME; any other
 * `${` is an error. A `$` not followed by `{` (or `${` after `$$`) is an ordinary character. Values are
 * inserted as they are and never scanned again.
 */
function scanString(
  s: string,
  pointer: string,
  lookup: (name: string) => string,
  budget: { left: number },
): Scan {
  if (!s.includes('${')) return { text: s, whole: undefined };
  let out = '';
  let i = 0;
  let refs = 0;
  let lastName: string | undefined;
  while (i < s.length) {
    const at = s.indexOf('$', i);
    if (at < 0) {
      out += s.slice(i);
      break;
    }
    out += s.slice(i, at);
    if (s.startsWith('$${', at)) {
      out += '${';
      i = at + 3;
      continue;
    }
    if (s[at + 1] !== '{') {
      out += '$';
      i = at + 1;
      continue;
    }
    let end = at + 2;
    while (end < s.length && NAME_CHARS.test(s[end]!)) end++;
    const name = s.slice(at + 2, end);
    if (s[end] !== '}' || !VARIABLE_NAME_PATTERN.test(name)) {
      throw invalid(
        pointer,
        '"${" must start a reference ${NAME} (NAME: [A-Za-z_][A-Za-z0-9_]*); write "$${" for a literal "${"',
      );
    }
    if (name.length > MAX_VARIABLE_NAME_LENGTH) {
      throw invalid(pointer, `variable name longer than ${MAX_VARIABLE_NAME_LENGTH} characters`);
    }
    const value = lookup(name);
    budget.left -= value.length;
    if (budget.left < 0) {
      throw new WorkflowError(
        'WORKFLOW_VARIABLE_TOO_LARGE',
        'substituted bootstrap variables add more text than the cap allows',
      );
    }
    out += value;
    refs++;
    lastName = name;
    i = end + 1;
  }
  return { text: out, whole: refs === 1 && s === `\${${lastName}}` ? lastName : undefined };
}

/**
 * Replaces `${NAME}` references in every **string value** of a parsed JSON value (object member names are never
 * touched), so a variable's value can never change the structure: whatever it holds stays one string.
 * Grammar (SPEC.md §8.1): NAME matches {@link VARIABLE_NAME_PATTERN}; a reference may be the whole string or a part
 * of it (`"Bearer ${TOKEN}"`); `$${` writes a literal `${`; any other `${` is an error; values are not scanned
 * again. Messages name the variable and the JSON pointer, never a value.
 *
 * @param value - a parsed JSON value (it is copied; the input is not modified).
 * @param variables - the values by name.
 * @throws WorkflowError `WORKFLOW_VARIABLE_MISSING` (a referenced name has no value), `WORKFLOW_VARIABLE_INVALID`
 *   (malformed reference, forbidden name), `WORKFLOW_VARIABLE_TOO_LARGE` (over `maxAddedChars`),
 *   `WORKFLOW_VALUE_INVALID` (not plain JSON).
 */
export function substituteVariables(
  value: unknown,
  variables: ReadonlyMap<string, string>,
  options: SubstituteVariablesOptions = {},
): SubstitutionResult {
  const root = toJsonValue(value);
  const used = new Set<string>();
  const whole: WholeReference[] = [];
  const budget = { left: options.maxAddedChars ?? MAX_SUBSTITUTED_CHARS };
  const at: (string | number)[] = [];
  const lookupAt = (pointer: string) => (name: string) => {
    if (options.forbidden?.has(name)) {
      throw invalid(pointer, `variable ${shown(name)} may not be used in a bootstrap`);
    }
    const v = variables.get(name);
    if (v === undefined) {
      throw new WorkflowError(
        'WORKFLOW_VARIABLE_MISSING',
        `bootstrap variable ${shown(name)} (at ${pointer || '/'}) is not set`,
        { details: { errors: [{ pointer, detail: `variable ${shown(name)} is not set` }] } },
      );
    }
    used.add(name);
    return v;
  };
  const visit = (parent: JsonObject | JsonValue[], key: string | number): void => {
    const v = (parent as Record<string | number, JsonValue>)[key]!;
    at.push(key);
    if (typeof v === 'string') {
      // `at` starts with the box's index 0, which is not part of the caller's value.
      const pointer = toPointer(at.slice(1));
      const r = scanString(v, pointer, lookupAt(pointer), budget);
      (parent as Record<string | number, JsonValue>)[key] = r.text;
      if (r.whole !== undefined) whole.push({ pointer, parent, key });
    } else if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) visit(v, i);
    } else if (isJsonObject(v)) {
      for (const k of Object.keys(v)) visit(v, k);
    }
    at.pop();
  };
  const box = [root];
  visit(box, 0);
  at.length = 0;
  return { value: box[0]!, used: [...used], whole };
}

function fileError(why: string): WorkflowError {
  return new WorkflowError('WORKFLOW_SECRETS_FILE_INVALID', `secrets file: ${why}`);
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Strips one matching pair of quotes; the inside is taken literally (no escapes). */
function unquote(raw: string, line: number): string {
  const q = raw[0];
  if (q !== '"' && q !== "'") return raw;
  if (raw.length < 2 || raw[raw.length - 1] !== q) throw fileError(`line ${line}: unterminated quoted value`);
  return raw.slice(1, -1);
}

function parseLines(text: string): Map<string, string> {
  const out = new Map<string, string>();
  const lineOf = new Map<string, number>();
  const lines = text.split('\n');
  lines.forEach((rawLine, i) => {
    const n = i + 1;
    const line = rawLine.endsWith('\r') ? rawLine.slice(0, -1) : rawLine;
    const trimmed = line.replace(/^[ \t]+/, '');
    if (trimmed === '' || trimmed.startsWith('#')) return;
    const body = /^export[ \t]+/.test(trimmed) ? trimmed.replace(/^export[ \t]+/, '') : trimmed;
    const eq = body.indexOf('=');
    if (eq < 0) throw fileError(`line ${n}: expected NAME=value`);
    const name = body.slice(0, eq).replace(/[ \t]+$/, '');
    if (!VARIABLE_NAME_PATTERN.test(name) || name.length > MAX_VARIABLE_NAME_LENGTH) {
      throw fileError(
        `line ${n}: the name before "=" must match [A-Za-z_][A-Za-z0-9_]* (at most ${MAX_VARIABLE_NAME_LENGTH} characters)`,
      );
    }
    const value = unquote(body.slice(eq + 1).replace(/^[ \t]+|[ \t]+$/g, ''), n);
    const first = lineOf.get(name);
    if (first !== undefined) throw fileError(`${name} is set twice (lines ${first} and ${n})`);
    lineOf.set(name, n);
    out.set(name, value);
  });
  return out;
}

function parseJsonObject(text: string): Map<string, string> {
  let parsed: JsonValue;
  try {
    parsed = parseStrictJson(text, { maxBytes: MAX_SECRETS_FILE_BYTES });
  } catch (cause) {
    // The strict parser's message names a position and a rule, never content.
    throw new WorkflowError(
      'WORKFLOW_SECRETS_FILE_INVALID',
      `secrets file: not valid JSON (${(cause as Error).message})`,
      { cause },
    );
  }
  if (!isJsonObject(parsed)) throw fileError('a JSON secrets file must be an object of string values');
  const out = new Map<string, string>();
  for (const [i, name] of Object.keys(parsed).entries()) {
    // Not echoed: a value pasted where a name belongs must not reach a log.
    if (!VARIABLE_NAME_PATTERN.test(name) || name.length > MAX_VARIABLE_NAME_LENGTH) {
      throw fileError(`member ${i + 1} has a name that is not a variable name ([A-Za-z_][A-Za-z0-9_]*)`);
    }
    const v = parsed[name];
    if (typeof v !== 'string') throw fileError(`member ${name} must be a string`);
    out.set(name, v);
  }
  return out;
}

/**
 * Parses a secrets file (SPEC.md §8.1): UTF-8 (a leading BOM is ignored); when the first non-blank character is
 * `{` it is one JSON object of string values (strict JSON, no duplicate members), otherwise `NAME=value` lines:
 * LF or CRLF line ends; blank lines and lines starting with `#` (after blanks) are skipped; an optional
 * `export ` prefix; blanks around the name and the value are dropped; a value wrapped in one pair of `"` or `'`
 * is taken literally (blanks and `#` kept, no escapes); an unquoted value runs to the end of the line, `#`
 * included; a name set twice is an error. Messages name line numbers and names, never values.
 *
 * @throws WorkflowError `WORKFLOW_SECRETS_FILE_INVALID`.
 */
export function parseSecretsFile(input: Uint8Array | string): Map<string, string> {
  let text: string;
  if (typeof input === 'string') text = input;
  else {
    if (input.byteLength > MAX_SECRETS_FILE_BYTES)
      throw fileError(`larger than ${MAX_SECRETS_FILE_BYTES} bytes`);
    try {
      text = utf8.decode(input);
    } catch (cause) {
      throw new WorkflowError('WORKFLOW_SECRETS_FILE_INVALID', 'secrets file: not valid UTF-8', { cause });
    }
  }
  if (text.length > MAX_SECRETS_FILE_BYTES) throw fileError(`larger than ${MAX_SECRETS_FILE_BYTES} bytes`);
  if (text.startsWith('\uFEFF')) text = text.slice(1);
  if (text.includes('\u0000')) throw fileError('contains a NUL character');
  return /^\s*\{/.test(text) ? parseJsonObject(text) : parseLines(text);
}
