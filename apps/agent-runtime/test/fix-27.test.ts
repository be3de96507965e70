import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer as createNetServer, type AddressInfo, type Server as NetServer } from 'node:net';
import { join, relative } from 'node:path';
import type { DeploymentRecord } from '@org/workflow-compiler';
import { DELIBERATE_DIFFERENCES } from '@org/workflow-runtime/internal';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdminServer, listenAdmin, Readiness } from '../src/admin.js';
import { createAgentMetrics } from '../src/metrics.js';
import { loadWorkflow } from '../src/startup/package-loader.js';
import { startAgent, type RunningAgent } from './agent-helpers.js';
import { makeKeys, makeRecord, tempDir, writePackage } from './fixtures.js';

// Issue 27: messages that name what the operator needs (the path tried, the base directory, the errno; the
// variable of a taken port; both package ids), and one short start-up line for the deliberate differences.

const keys = makeKeys();
const dir = tempDir();
const options = { allowUnpackaged: false, maxPackageBytes: 1 << 20, baseDir: dir };
const rec = (path: string) => makeRecord(keys, path) as unknown as DeploymentRecord;

async function failure(p: Promise<unknown>): Promise<{ code: string; message: string }> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e as { code: string; message: string },
  );
  if (err === undefined) throw new Error('did not reject');
  return err;
}

describe('fix-27: AGENT_REMOTE_CONFIGURATION_UNREADABLE', () => {
  it('names the path tried, the relative path, the base directory and ENOENT', async () => {
    const e = await failure(loadWorkflow(rec('apps/missing.oapp'), options));
    expect(e.code).toBe('AGENT_REMOTE_CONFIGURATION_UNREADABLE');
    expect(e.message).toBe(
      `deployment "dep-1": remoteConfiguration cannot be read (ENOENT): tried ${JSON.stringify(join(dir, 'apps/missing.oapp'))}, ` +
        `"apps/missing.oapp" resolved against the base directory ${JSON.stringify(dir)}`,
    );
  });

  it('names the errno of a directory (EISDIR) and of a file used as a directory (ENOTDIR)', async () => {
    mkdirSync(join(dir, 'a-directory.oapp'), { recursive: true });
    const isDir = await failure(loadWorkflow(rec('a-directory.oapp'), options));
    expect(isDir).toMatchObject({ code: 'AGENT_REMOTE_CONFIGURATION_UNREADABLE' });
    expect(isDir.message).toContain('(EISDIR)');
    writeFileSync(join(dir, 'plain-file'), 'SECRET-CONTENT-never-shown');
    const notDir = await failure(loadWorkflow(rec('plain-file/app.oapp'), options));
    expect(notDir.message).toContain('(ENOTDIR)');
    expect(notDir.message).toContain(JSON.stringify(join(dir, 'plain-file/app.oapp')));
    expect(notDir.message).not.toContain('SECRET-CONTENT');
  });

  it('says when an absolute path did not use the base directory, and escapes control characters', async () => {
    const absolute = join(dir, 'gone\u0007.oapp');
    const e = await failure(loadWorkflow(rec(absolute), { ...options, baseDir: join(dir, 'elsewhere') }));
    expect(e.message).toContain(`tried ${JSON.stringify(absolute)}, an absolute path (base directory`);
    expect(e.message).toContain(JSON.stringify(join(dir, 'elsewhere')));
    expect(e.message).toContain('\\u0007');
    expect(e.message).not.toContain('\u0007');
  });

  it('names the path when a plain workflow file cannot be read (AGENT_ALLOW_UNPACKAGED)', async () => {
    mkdirSync(join(dir, 'workflow-dir.json'), { recursive: true });
    const e = await failure(
      loadWorkflow(rec(relative(dir, join(dir, 'workflow-dir.json'))), { ...options, allowUnpackaged: true }),
    );
    expect(e).toMatchObject({ code: 'AGENT_REMOTE_CONFIGURATION_UNREADABLE' });
    expect(e.message).toContain('(EISDIR)');
  });
});

describe('fix-27: POLICY_PACKAGE_ID_MISMATCH in the agent', () => {
  it('shows the id the package carries and the id the deployment expects', async () => {
    const e = await failure(loadWorkflow(rec(writePackage(dir, keys, { packageId: 'other-app' })), options));
    expect(e.code).toBe('POLICY_PACKAGE_ID_MISMATCH');
    expect(e.message).toBe(
      'deployment "dep-1": the package id "other-app" does not equal the deployment\'s packaging.packageId ' +
        '"echo-app" (compared byte for byte)',
    );
  });
});

describe('fix-27: listenAdmin', () => {
  let taken: NetServer;
  let port: number;
  beforeAll(async () => {
    taken = createNetServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    port = (taken.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => taken.close(() => resolve())));

  it('refuses a taken port with AGENT_LISTEN_FAILED naming AGENT_ADMIN_PORT and the port', async () => {
    const admin = createAdminServer({ readiness: new Readiness(), registry: createAgentMetrics().registry });
    const e = await failure(listenAdmin(admin, { bind: '127.0.0.1', port }));
    expect(e.code).toBe('AGENT_LISTEN_FAILED');
    expect(e.message).toBe(
      `the admin listener cannot listen on 127.0.0.1:${port} (EADDRINUSE): port ${port} (AGENT_ADMIN_PORT) is in ` +
        'use; set AGENT_ADMIN_PORT to a free port, 0 for any free port, or off',
    );
    expect(admin.listening).toBe(false);
  });

  it('names AGENT_ADMIN_BIND when the address cannot be bound', async () => {
    const admin = createAdminServer({ readiness: new Readiness(), registry: createAgentMetrics().registry });
    // 192.0.2.1 (TEST-NET-1, RFC 5737) is on no interface of this host.
    const e = await failure(listenAdmin(admin, { bind: '192.0.2.1', port: 0 }));
    expect(e.code).toBe('AGENT_LISTEN_FAILED');
    expect(e.message).toContain('(EADDRNOTAVAIL)');
    expect(e.message).toContain('AGENT_ADMIN_BIND (192.0.2.1)');
  });

  it('resolves with the bound port and leaves no error listener behind', async () => {
    const admin = createAdminServer({ readiness: new Readiness(), registry: createAgentMetrics().registry });
    const bound = await listenAdmin(admin, { bind: '127.0.0.1', port: 0 });
    expect(bound.port).toBeGreaterThan(0);
    expect(admin.listenerCount('error')).toBe(0);
    await new Promise<void>((resolve) => admin.close(() => resolve()));
  });
});

describe('fix-27: the deliberate differences at start-up', () => {
  let a: RunningAgent;
  // One agent at debug level; test/scheduling.test.ts checks that the info level shows the short line alone.
  beforeAll(async () => {
    a = await startAgent(keys, [makeRecord(keys, writePackage(dir, keys))], { logLevel: 'debug' });
  });
  afterAll(() => a.close());
  const lines = () => a.lines.filter((l) => l.includes('deliberate differences'));

  it('are one short info line with their count and where they are described', () => {
    const info = lines().filter((l) => l.includes('"level":"info"'));
    expect(info).toHaveLength(1);
    expect(info[0]!.length).toBeLessThan(200);
    expect(JSON.parse(info[0]!)).toMatchObject({
      level: 'info',
      msg: `${DELIBERATE_DIFFERENCES.length} deliberate differences from the reference agent; see apps/agent-runtime/README.md (debug level lists them)`,
    });
  });

  it('are listed one by one at debug level', () => {
    const debug = lines().filter((l) => l.includes('"level":"debug"'));
    expect(debug).toHaveLength(1);
    expect(JSON.parse(debug[0]!)).toMatchObject({
      level: 'debug',
      msg: 'deliberate differences from the reference agent',
      differences: DELIBERATE_DIFFERENCES,
    });
  });
});
