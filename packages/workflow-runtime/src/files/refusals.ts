import { AgentError } from '../errors.js';

/** docs/interfaces.md §5.7: a refusal's message contains `Not permitted` and `FC2`. */
export function notPermitted(what: string, why: string): AgentError {
  return new AgentError('AGENT_FILE_NOT_PERMITTED', `Not permitted (FC2): ${what}: ${why}`);
}

export function notFound(what: string): AgentError {
  return new AgentError('AGENT_FILE_NOT_FOUND', `${what}: no such file or directory`);
}

export function tooLarge(what: string, why: string): AgentError {
  return new AgentError('AGENT_FILE_TOO_LARGE', `${what}: ${why}`);
}

/** An I/O failure: the system error's code only (never a path outside the entry). */
export function failed(what: string, cause: unknown): AgentError {
  const code = (cause as { code?: unknown } | null)?.code;
  return new AgentError(
    'AGENT_FILE_FAILED',
    `${what} failed (${typeof code === 'string' ? code : 'error'})`,
    {
      cause,
    },
  );
}

/** Longest path segment, in UTF-16 code units (file systems allow 255 bytes). */
export const MAX_SEGMENT_CHARS = 255;
export const MAX_PATH_CHARS = 4096;

/**
 * The segments of a path a script passed (S132): relative, `/`-separated, no empty, `.` or `..` segment, no
 * segment ending in `.` or a space (some file systems drop those, so the name would alias another), no
 * backslash, NUL or other control character, no percent-escape (nothing is decoded, and `%2e%2e` is refused
 * rather than taken as a name). `''` is the entry itself (no segments) where `allowEmpty`.
 * @throws AgentError `AGENT_FILE_NOT_PERMITTED`.
 */
export function pathSegments(path: string, what: string, allowEmpty: boolean): string[] {
  const refuse = (why: string) => notPermitted(what, why);
  if (path === '') {
    if (allowEmpty) return [];
    throw refuse('an empty path');
  }
  if (path.length > MAX_PATH_CHARS) throw refuse(`a path longer than ${MAX_PATH_CHARS} characters`);
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
  if (/[\u0000-\u001f\u007f\\]/.test(path)) throw refuse('a control character or backslash in the path');
  if (/%[0-9a-fA-F]{2}/.test(path)) throw refuse('a percent-escape in the path');
  if (path.startsWith('/')) throw refuse('an absolute path');
  const segments = path.split('/');
  for (const s of segments) {
    if (s === '' || s === '.' || s === '..') throw refuse('an empty, "." or ".." segment');
    if (s.endsWith('.') || s.endsWith(' ')) throw refuse('a name ending in "." or a space');
    if (s.length > MAX_SEGMENT_CHARS) throw refuse(`a name longer than ${MAX_SEGMENT_CHARS} characters`);
  }
  return segments;
}
