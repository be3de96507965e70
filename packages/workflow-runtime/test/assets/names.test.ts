import { describe, expect, it } from 'vitest';
import { AgentError } from '../../src/errors.js';
import { assetEntryNameOf, assetPrefixOf, isSafeEntryName } from '../../src/assets/names.js';

describe('assetPrefixOf', () => {
  it.each([
    ['/static/.*', '/static/'],
    ['/static/(.*)', '/static/'],
    ['/a/b/[a-z]+\\.js', '/a/b/'],
    ['/favicon\\.ico', '/'],
    ['/index.html', '/'],
    ['/app(/.*)?', '/'],
    ['.*', '/'],
    ['/my%20files/.*', '/my%20files/'],
  ])('takes the literal start of %j up to its last slash: %j', (pattern, prefix) => {
    expect(assetPrefixOf(pattern)).toBe(prefix);
  });
});

describe('assetEntryNameOf', () => {
  it('maps the path after the prefix, percent-decoded once, to an entry name', () => {
    expect(assetEntryNameOf('/static/css/site.css', '/static/')).toBe('css/site.css');
    expect(assetEntryNameOf('/static/a%20b.txt', '/static/')).toBe('a b.txt');
    expect(assetEntryNameOf('/static/%2541', '/static/')).toBe('%41');
  });

  it('adds index.html for a directory', () => {
    expect(assetEntryNameOf('/static/', '/static/')).toBe('index.html');
    expect(assetEntryNameOf('/static/docs/', '/static/')).toBe('docs/index.html');
  });

  it('rejects a path outside the prefix with AGENT_ASSET_NOT_FOUND', () => {
    expect(() => assetEntryNameOf('/other/x', '/static/')).toThrowCode(AgentError, 'AGENT_ASSET_NOT_FOUND');
  });

  it.each([
    '/../x',
    '/%2e%2e/x',
    '/%2E%2E/x',
    '//etc/passwd',
    '/\\..\\x',
    '/%5c..%5cx',
    '/a/../../x',
    '/..%2fx',
    '/a/./b',
    '/a%00b',
    '/%E0%A4%A',
    '/C:/x',
  ])('S138 rejects %j with AGENT_ASSET_PATH_INVALID', (path) => {
    expect(() => assetEntryNameOf(path, '/')).toThrowCode(AgentError, 'AGENT_ASSET_PATH_INVALID');
  });
});

describe('isSafeEntryName', () => {
  it('accepts plain relative names and refuses everything else', () => {
    expect(isSafeEntryName('a/b/c.txt')).toBe(true);
    expect(isSafeEntryName('.well-known/x')).toBe(true);
    for (const bad of ['', '/a', 'a/', 'a//b', '..', 'a/..', './a', 'a\\b', 'C:a', 'a\nb', 'x'.repeat(1025)])
      expect([bad, isSafeEntryName(bad)]).toEqual([bad, false]);
  });
});
