import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { validateBootstrap, type DeploymentRecord } from '@org/workflow-compiler';
import { afterAll, describe, expect, it } from 'vitest';
import { AgentError } from '../../src/errors.js';
import { openAssetFile } from '../../src/assets/asset-file.js';

const dir = mkdtempSync(join(tmpdir(), 'assets-file-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
writeFileSync(join(dir, 'site.zip'), 'zip bytes');
mkdirSync(join(dir, 'folder.zip'));
symlinkSync(join(dir, 'site.zip'), join(dir, 'link.zip'));

const record = (file: Record<string, unknown>): DeploymentRecord =>
  validateBootstrap(
    JSON.stringify([
      {
        deploymentId: 'd1',
        remoteConfiguration: 'unused.oapp',
        allowHttpServerAccess: [
          { id: 'web', port: 9, serveFromPackagedAsset: { packagedAssetFileId: 'site' } },
        ],
        allowFileAccess: [{ id: 'site', READ: true, ...file }],
      },
    ]),
  )[0] as DeploymentRecord;

const openFile = (file: Record<string, unknown>) => openAssetFile(record(file), 'web', 'site', dir);

describe('openAssetFile', () => {
  it('resolves a relative path against the base directory and opens the regular file', async () => {
    const f = await openFile({ directoryOrFile: 'site.zip' });
    expect(f.path).toBe(join(dir, 'site.zip'));
    expect(f.size).toBe(9);
    await f.handle.close();
  });

  it('takes an absolute path as is, when its patterns match the file name', async () => {
    const f = await openFile({ directoryOrFile: join(dir, 'site.zip'), patterns: ['.*\\.zip'] });
    await f.handle.close();
  });

  it.each([
    ['a symbolic link', { directoryOrFile: 'link.zip' }, /is a symbolic link$/],
    ['a directory', { directoryOrFile: 'folder.zip' }, /is not a regular file$/],
    ['a missing file', { directoryOrFile: 'missing.zip' }, /does not exist$/],
    ['an entry without READ', { directoryOrFile: 'site.zip', READ: false }, /does not grant READ$/],
    [
      'patterns that do not match',
      { directoryOrFile: 'site.zip', patterns: ['.*\\.tar'] },
      /patterns do not match/,
    ],
  ])('refuses %s with AGENT_ASSET_UNREADABLE', async (_, file, message) => {
    const err = await openFile(file).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AgentError);
    expect(err).toMatchObject({ code: 'AGENT_ASSET_UNREADABLE' });
    expect((err as Error).message).toMatch(/^deployment "d1", server "web": allowFileAccess "site"/);
    expect((err as Error).message).toMatch(message);
  });
});
