import { WorkflowError } from './errors.js';
import { quoteName } from './json-value.js';

/** Longest accepted `resource` or `sourceWorkflow` path, in UTF-16 code units. */
export const MAX_RESOURCE_PATH_LENGTH = 1024;

const DRIVE = /^[A-Za-z]:/;
// Controls (NUL included) and the backslash are never part of a resource path (S103).
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const FORBIDDEN = /[\u0000-\u001f\u007f\\]/;

/**
 * Checks a resource path (SPEC.md §6.1) and returns its segments. Accepted: `a/b.js` or `/a/b.js` (one leading
 * slash, same meaning). Rejected: empty, `.` or `..` segments, a segment ending in `.` or a space (Windows and
 * some network file systems drop those, so `a.js.` or `a.js ` would open `a.js`), backslashes, control
 * characters, drive letters (`C:`), `//` prefixes (UNC), trailing slashes. No file system access happens here.
 *
 * @throws WorkflowError `WORKFLOW_RESOURCE_PATH_INVALID` naming the (escaped, shortened) path and the rule broken.
 */
export function parseResourcePath(path: string): string[] {
  if (path.length === 0 || path.length > MAX_RESOURCE_PATH_LENGTH) {
    throw pathInvalid(path, `length must be 1..${MAX_RESOURCE_PATH_LENGTH}`);
  }
  if (FORBIDDEN.test(path)) throw pathInvalid(path, 'backslashes and control characters are not allowed');
  if (DRIVE.test(path)) throw pathInvalid(path, 'drive letters are not allowed');
  const relative = path.startsWith('/') ? path.slice(1) : path;
  const segments = relative.split('/');
  for (const seg of segments) {
    if (seg === '') throw pathInvalid(path, 'empty segments (//, trailing /) are not allowed');
    if (seg === '.' || seg === '..') throw pathInvalid(path, '. and .. segments are not allowed');
    if (seg.endsWith('.') || seg.endsWith(' '))
      throw pathInvalid(path, 'a name may not end in "." or a space (it can alias another name)');
  }
  return segments;
}

function pathInvalid(path: string, why: string): WorkflowError {
  return new WorkflowError(
    'WORKFLOW_RESOURCE_PATH_INVALID',
    `resource path ${quoteName(path)} is invalid: ${why}`,
    {
      details: { errors: [{ pointer: '', detail: why }] },
    },
  );
}
