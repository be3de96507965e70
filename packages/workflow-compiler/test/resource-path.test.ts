import { describe, expect, it } from 'vitest';
import { WorkflowError } from '../src/index.js';
import { parseResourcePath } from '../src/resource-path.js';

describe('parseResourcePath', () => {
  it('accepts relative paths with or without one leading slash', () => {
    expect(parseResourcePath('/general/clear-headers.js')).toEqual(['general', 'clear-headers.js']);
    expect(parseResourcePath('general/clear-headers.js')).toEqual(['general', 'clear-headers.js']);
    expect(parseResourcePath('a..b/.hidden/x.js')).toEqual(['a..b', '.hidden', 'x.js']);
  });

  it.each([
    ['../x', 'parent'],
    ['a/../../x', 'parent inside'],
    ['..\\x', 'backslash parent'],
    ['C:\\x', 'drive with backslash'],
    ['C:x', 'drive-relative'],
    ['c:/x', 'drive with slash'],
    ['\\\\host\\share\\x', 'UNC'],
    ['//host/share/x', 'UNC with slashes'],
    ['a\u0000.js', 'NUL'],
    ['a\n.js', 'newline'],
    ['a//b.js', 'empty segment'],
    ['a/', 'trailing slash'],
    ['/', 'root only'],
    ['', 'empty'],
    ['./a.js', 'dot segment'],
    ['a/./b.js', 'inner dot segment'],
    ['x'.repeat(1025), 'too long'],
    // Regression: trailing dots and spaces alias other names on some file systems.
    ['a.js.', 'trailing dot'],
    ['a.js ', 'trailing space'],
    ['a.js..', 'trailing dots'],
    ['dir./a.js', 'directory with a trailing dot'],
    ['dir /a.js', 'directory with a trailing space'],
    ['/general/clear-headers.js. ', 'trailing dot and space'],
    ['...', 'three dots'],
  ])('rejects %j (%s) with WORKFLOW_RESOURCE_PATH_INVALID (S103)', (path) => {
    expect(() => parseResourcePath(path)).toThrowCode(WorkflowError, 'WORKFLOW_RESOURCE_PATH_INVALID');
  });
});
