import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { APP, BUILD, build, node, oapp, readBootstrap, ROOT, tempDir } from './helpers.js';

// A build runs the oapp command line six times (five keygens, one package): 3-6 s on this shared 2-core machine.
const BUILD_MS = 60_000;
// One oapp run: about 0.5 s, more under load.
const OAPP_MS = 20_000;

const SIGNERS = ['app', 'packager-app', 'packager-1.x'];
const keysOf = (out: string) => join(out, 'keys');

describe('the build (scripts/build.mjs, run by pnpm build)', () => {
  let a = '';
  let b = '';

  beforeAll(async () => {
    [a, b] = await Promise.all([build(), build()]);
  }, BUILD_MS);

  it('writes packager.oapp, packager.oapp.hash and, with throw-away keys, a bootstrap; secrets are 0600', () => {
    for (const f of ['packager.oapp', 'packager.oapp.hash', 'packager.bootstrap.json']) {
      expect(statSync(join(a, f)).isFile(), f).toBe(true);
    }
    expect(statSync(join(a, 'packager.bootstrap.json')).mode & 0o777).toBe(0o600);
    expect(statSync(keysOf(a)).mode & 0o777).toBe(0o700);
    for (const id of [...SIGNERS, 'packager-identity', 'packager-deployment']) {
      expect(statSync(join(keysOf(a), `${id}.key`)).mode & 0o777, id).toBe(0o600);
    }
  });

  it(
    'oapp verify --bootstrap accepts the package: packager identity, the three signers, a compiled workflow',
    async () => {
      const r = await oapp(['verify', '--bootstrap', join(a, 'packager.bootstrap.json')]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/^verified: package "packager"$/m);
      expect(r.stdout).toMatch(/required signers\s+"app", "packager-app", "packager-1\.x"$/m);
      expect(r.stdout).toContain(readFileSync(join(a, 'packager.oapp.hash'), 'utf8').trim());
    },
    OAPP_MS,
  );

  it(
    'two builds of one commit give the same hash: the workflow hash of the content, as oapp hash and oapp inspect show it',
    async () => {
      const hash = readFileSync(join(a, 'packager.oapp.hash'), 'utf8');
      expect(hash).toMatch(/^[0-9a-f]{64}\n$/);
      expect(readFileSync(join(b, 'packager.oapp.hash'), 'utf8')).toBe(hash);
      // Other keys, other bytes: the hash names the content, not the file.
      expect(readFileSync(join(b, 'packager.oapp')).equals(readFileSync(join(a, 'packager.oapp')))).toBe(
        false,
      );
      const [source, inspected] = await Promise.all([
        oapp(['hash', join(APP, 'packager.workflow.json'), '--resource-dir', join(APP, 'resources')]),
        oapp(['inspect', '--json', join(b, 'packager.oapp')]),
      ]);
      expect(source.stdout).toBe(hash);
      const info = JSON.parse(inspected.stdout) as {
        packageId: string;
        content: { sha256: string };
        signatures: { valid: boolean; signText: string }[];
      };
      expect(info.packageId).toBe('packager');
      expect(info.content.sha256).toBe(hash.trim());
      const version = (JSON.parse(readFileSync(join(APP, 'package.json'), 'utf8')) as { version: string })
        .version;
      expect(info.signatures.map((s) => [s.valid, s.signText])).toEqual(
        SIGNERS.map(() => [true, `packager ${version}`]),
      );
    },
    OAPP_MS,
  );

  it('the bootstrap pins the package and its signers, grants the packager, the API on 39575 and the resources', () => {
    const [record, ...more] = readBootstrap(a);
    expect(more).toEqual([]);
    expect(record!.remoteConfiguration).toBe(join(a, 'packager.oapp'));
    expect(record!.packaging).toEqual({
      packageId: 'packager',
      packagerIdentities: ['packager-identity'],
      requiredSigners: SIGNERS.map((id) => ({ id })),
    });
    expect(record!.keys.map((k) => `${k.id} ${k.purpose} ${k.type}`)).toEqual([
      'packager-identity authenticated public',
      'packager-deployment authenticated secret',
      ...SIGNERS.map((id) => `${id} sign public`),
    ]);
    expect(record!['allowPackagerAccess']).toBe(true);
    // S163: no bindAddress, so the agent's loopback default.
    expect(record!.allowHttpServerAccess).toEqual([{ id: 'api', port: 39575 }]);
    expect(record!.allowFileAccess).toEqual([
      { id: 'community-resources', directoryOrFile: join(ROOT, 'resources'), READ: true, LIST: true },
      { id: 'local-resources1', directoryOrFile: '/local-resources1', READ: true, LIST: true },
      { id: 'local-resources2', directoryOrFile: '/local-resources2', READ: true, LIST: true },
    ]);
    expect(record!.data).toEqual({
      resourceIds: ['community-resources', 'local-resources1', 'local-resources2'],
    });
    expect(statSync(join(ROOT, 'resources')).isDirectory()).toBe(true);
  });

  it(
    'writes the container form with --package-path, --resource-dirs and --bind',
    async () => {
      const out = await build([
        '--package-path',
        '/app/packager/packager.oapp',
        '--resource-dirs',
        '/community-resources,/local-resources1,/local-resources2',
        '--bind',
        '0.0.0.0',
      ]);
      const [record] = readBootstrap(out);
      expect(record!.remoteConfiguration).toBe('/app/packager/packager.oapp');
      expect(record!.allowHttpServerAccess).toEqual([{ id: 'api', port: 39575, bindAddress: '0.0.0.0' }]);
      expect(record!.allowFileAccess.map((f) => f.directoryOrFile)).toEqual([
        '/community-resources',
        '/local-resources1',
        '/local-resources2',
      ]);
    },
    BUILD_MS,
  );

  it(
    'release keys from the environment: all or none, the lock key only for its major; signed with them, no bootstrap',
    async () => {
      const k = (id: string) => join(keysOf(a), `${id}.key`);
      const release = {
        PACKAGER_APP_IDENTITY: k('packager-identity'),
        PACKAGER_APP_SIGNING_KEY: k('app'),
        PACKAGER_APP_KEY: `env://APP_KEY_RECORD`,
        APP_KEY_RECORD: readFileSync(k('packager-app'), 'utf8'),
        PACKAGER_APP_LOCK_KEY: k('packager-1.x'),
        PACKAGER_APP_RECIPIENTS: join(keysOf(a), 'packager-deployment.pub'),
      };
      const out = tempDir();
      const partial = await node(BUILD, ['--out', out], {
        PACKAGER_APP_IDENTITY: release.PACKAGER_APP_IDENTITY,
      });
      expect(partial.code).toBe(2);
      expect(partial.stderr).toContain(
        'release keys are all or none: PACKAGER_APP_SIGNING_KEY, PACKAGER_APP_KEY, PACKAGER_APP_LOCK_KEY, PACKAGER_APP_RECIPIENTS not set',
      );

      const otherMajor = await node(BUILD, ['--out', out], {
        ...release,
        PACKAGER_APP_LOCK_KEY: 'env://LOCK',
        LOCK: readFileSync(k('packager-1.x'), 'utf8').replace('"packager-1.x"', '"packager-2.x"'),
      });
      expect(otherMajor.code).toBe(2);
      expect(otherMajor.stderr).toMatch(
        /the key "packager-2\.x": version .* is signed only by "packager-1\.x"/,
      );

      const signed = await node(BUILD, ['--out', out], release);
      expect(signed.code, signed.stderr).toBe(0);
      expect(signed.stdout).toContain('release keys from the environment; no bootstrap written');
      expect(() => statSync(join(out, 'packager.bootstrap.json'))).toThrow();
      const pub = (id: string) => join(keysOf(a), `${id}.pub`);
      const verified = await oapp([
        'verify',
        join(out, 'packager.oapp'),
        '--package-id',
        'packager',
        '--packager',
        pub('packager-identity'),
        ...SIGNERS.flatMap((id) => ['--required-signer', pub(id)]),
      ]);
      expect(verified.code, verified.stderr).toBe(0);
      expect(readFileSync(join(out, 'packager.oapp.hash'), 'utf8')).toBe(
        readFileSync(join(a, 'packager.oapp.hash'), 'utf8'),
      );
    },
    BUILD_MS,
  );

  it(
    'refuses an unknown option with its usage (exit 2)',
    async () => {
      const r = await node(BUILD, ['--nope']);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('usage: node scripts/build.mjs');
    },
    OAPP_MS,
  );
});
