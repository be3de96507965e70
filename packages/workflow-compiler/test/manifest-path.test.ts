import { describe, expect, it } from 'vitest';
import { WorkflowError, formatManifestPath, parseManifestPath } from '../src/index.js';

describe('parseManifestPath', () => {
  it.each([
    ['$', []],
    ['$.workflows[0].steps[12].trigger.http.path', ['workflows', 0, 'steps', 12, 'trigger', 'http', 'path']],
    ["$['data']['my key']", ['data', 'my key']],
    ["$.data['it\\'s']['back\\\\slash']", ['data', "it's", 'back\\slash']],
    ["$.httpStatusHandling['429']", ['httpStatusHandling', '429']],
    ['$.data.x-y.$z._a', ['data', 'x-y', '$z', '_a']],
    ["$['']", ['']],
  ])('parses %s', (path, segments) => {
    expect(parseManifestPath(path)).toEqual(segments);
  });

  it.each([
    '',
    'workflows[0]',
    '$.',
    '$..a',
    '$.*',
    '$[*]',
    '$[-1]',
    '$[01]',
    '$[1',
    "$['a]",
    '$["a"]',
    '$.a b',
    '$[?(@.x)]',
    '$.1a',
    `$${'.a'.repeat(600)}`,
  ])('rejects %j with WORKFLOW_MANIFEST_PATH_INVALID', (path) => {
    expect(() => parseManifestPath(path)).toThrowCode(WorkflowError, 'WORKFLOW_MANIFEST_PATH_INVALID');
  });

  it('formats segments back to a path that parses to the same segments', () => {
    const segments = ['workflows', 0, 'data', "it's", 'a b', '429'];
    expect(formatManifestPath(segments)).toBe("$.workflows[0].data['it\\'s']['a b']['429']");
    expect(parseManifestPath(formatManifestPath(segments))).toEqual(segments);
  });
});
