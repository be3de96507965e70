import { WorkflowError } from './errors.js';
import { quoteName } from './json-value.js';

/** Longest accepted `sourcePath`, in UTF-16 code units. */
export const MAX_MANIFEST_PATH_LENGTH = 1024;

/** One step of a manifest path: a member name or an array index. */
export type ManifestPathSegment = string | number;

const NAME = /[A-Za-z_$][A-Za-z0-9_$-]*/y;
const INDEX = /\[(0|[1-9][0-9]{0,14})\]/y;
const QUOTED = /\['((?:[^'\\]|\\['\\])*)'\]/y;

/**
 * Parses a manifest `sourcePath` (SPEC.md §7.1): `$` followed by any of `.name`, `[index]`, `['key']`
 * (`\'` and `\\` escape inside quotes). No wildcards, filters, negative indexes or recursive descent.
 *
 * @throws WorkflowError `WORKFLOW_MANIFEST_PATH_INVALID` naming the offset of the first unparsable character.
 */
export function parseManifestPath(path: string): ManifestPathSegment[] {
  if (path.length > MAX_MANIFEST_PATH_LENGTH) throw invalid(path, `longer than ${MAX_MANIFEST_PATH_LENGTH}`);
  if (!path.startsWith('$')) throw invalid(path, 'must start with $');
  const out: ManifestPathSegment[] = [];
  let i = 1;
  while (i < path.length) {
    const step = path[i] === '.' ? readName(path, i + 1) : readBracket(path, i);
    if (step === null) throw invalid(path, `unexpected character at offset ${i}`);
    out.push(step.segment);
    i = step.end;
  }
  return out;
}

function readName(path: string, at: number): { segment: string; end: number } | null {
  NAME.lastIndex = at;
  const m = NAME.exec(path);
  return m === null ? null : { segment: m[0], end: at + m[0].length };
}

function readBracket(path: string, at: number): { segment: ManifestPathSegment; end: number } | null {
  INDEX.lastIndex = at;
  const index = INDEX.exec(path);
  if (index !== null) return { segment: Number(index[1]), end: at + index[0].length };
  QUOTED.lastIndex = at;
  const quoted = QUOTED.exec(path);
  if (quoted === null) return null;
  return { segment: (quoted[1] ?? '').replace(/\\(['\\])/g, '$1'), end: at + quoted[0].length };
}

/** Renders segments back in the manifest syntax (names that are not plain identifiers are quoted). */
export function formatManifestPath(segments: readonly ManifestPathSegment[]): string {
  return (
    '$' +
    segments
      .map((s) => {
        if (typeof s === 'number') return `[${s}]`;
        return /^[A-Za-z_$][A-Za-z0-9_$-]*$/.test(s) ? `.${s}` : `['${s.replace(/(['\\])/g, '\\$1')}']`;
      })
      .join('')
  );
}

function invalid(path: string, why: string): WorkflowError {
  return new WorkflowError(
    'WORKFLOW_MANIFEST_PATH_INVALID',
    `manifest path ${quoteName(path)} is invalid: ${why}`,
  );
}
