import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateKeyPair, keyToHex, type Key, type KeyPair } from '@org/envelope-crypto';
import { createPackage } from '@org/oapp-format';
import { canonicalize, compileWorkflow, hashWorkflow } from '@org/workflow-compiler';
import { beforeAll, describe, expect, it } from 'vitest';
import { HELLO_WORKFLOW, oapp, tempDir } from './helpers.js';
import { readmeBlocks } from './readme-blocks.js';

// Issue 27 §2, "tried as a new user would, from a fresh clone": `oapp` at the repository root, and
// `verify --bootstrap` doing the agent's whole start-up check.

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const dir = tempDir();
const run = (args: string[]) => oapp(args, { cwd: dir });
/** Tests that run one or two `oapp` child processes (0.5–3 s each on this shared 2-core machine). */
const CHILDREN_MS = 20_000;

const record = (id: string, purpose: 'authenticated' | 'sign', type: 'public' | 'secret', key: Key) => ({
  id,
  purpose,
  type,
  keyHex: keyToHex(key),
});

let packager: KeyPair;
let deployment: KeyPair;
let author: KeyPair;
let compiled: unknown;

/** An app package of `content`, made with the library (the cli itself only writes the canonical form). */
function packageOf(file: string, content: string, recipient = deployment): void {
  const bytes = createPackage({
    packageId: 'hello-app',
    content: new TextEncoder().encode(content),
    packagerSecretKey: packager.secretKey,
    recipients: [recipient.publicKey!],
    signers: [{ secretKey: author.secretKey, signText: 'release 1' }],
  });
  writeFileSync(join(dir, file), bytes);
}

/** A one-record bootstrap naming `file`; `twoOwnKeys` adds a second authenticated secret key. */
function bootstrapFor(file: string, twoOwnKeys = false): string {
  const second = generateKeyPair('authenticated').secretKey;
  const keys = [
    record('packager', 'authenticated', 'public', packager.publicKey!),
    record('this-deployment', 'authenticated', 'secret', deployment.secretKey),
    ...(twoOwnKeys ? [record('another', 'authenticated', 'secret', second)] : []),
    record('author', 'sign', 'public', author.publicKey!),
  ];
  const name = `${file}.bootstrap.json`;
  const packaging = {
    packageId: 'hello-app',
    packagerIdentities: ['packager'],
    requiredSigners: [{ id: 'author' }],
  };
  writeFileSync(
    join(dir, name),
    JSON.stringify([{ deploymentId: 'hello-1', remoteConfiguration: file, packaging, keys }]),
  );
  return name;
}

beforeAll(async () => {
  packager = generateKeyPair('authenticated');
  deployment = generateKeyPair('authenticated');
  author = generateKeyPair('sign');
  compiled = (await compileWorkflow(JSON.stringify(HELLO_WORKFLOW))).workflow;
  packageOf('canonical.oapp', canonicalize(compiled));
  // Valid JSON, the same compiled workflow, but indented: the agent refuses it with WORKFLOW_NOT_CANONICAL.
  packageOf('indented.oapp', JSON.stringify(compiled, null, 2));
  packageOf('for-someone-else.oapp', canonicalize(compiled), generateKeyPair('authenticated'));
  writeFileSync(
    join(dir, 'packager.pub'),
    JSON.stringify(record('packager', 'authenticated', 'public', packager.publicKey!)),
  );
  writeFileSync(
    join(dir, 'author.pub'),
    JSON.stringify(record('author', 'sign', 'public', author.publicKey!)),
  );
});

describe('oapp verify --bootstrap: the agent start-up check, content included (issue 27)', () => {
  it(
    'refuses a package whose content is valid JSON but not canonical with WORKFLOW_NOT_CANONICAL, exit 1',
    async () => {
      const r = await run(['verify', '--bootstrap', bootstrapFor('indented.oapp')]);
      expect(r.out).toBe('');
      expect(r.stderr).toMatch(/^oapp: WORKFLOW_NOT_CANONICAL: deployment "hello-1": .*canonical/);
      expect(r.code).toBe(1);
      const j = await run(['verify', '--bootstrap', bootstrapFor('indented.oapp'), '--json']);
      expect(j.code).toBe(1);
      expect(j.json()).toMatchObject({ ok: false, errors: [{ code: 'WORKFLOW_NOT_CANONICAL' }] });
    },
    CHILDREN_MS,
  );

  it(
    'verifies the canonical form and names the workflow hash',
    async () => {
      const hash = hashWorkflow(compiled as Parameters<typeof hashWorkflow>[0]);
      const r = await run(['verify', '--bootstrap', bootstrapFor('canonical.oapp')]);
      expect(r.stderr).toBe('');
      expect(r.out).toContain('verified: package "hello-app"');
      expect(r.out).toContain(`content              compiled workflow, hash ${hash}`);
      expect(r.code).toBe(0);
      const j = await run(['verify', '--bootstrap', bootstrapFor('canonical.oapp'), '--json']);
      expect(j.json()).toMatchObject({ ok: true, packageId: 'hello-app', workflowHash: hash });
    },
    CHILDREN_MS,
  );

  it(
    'refuses a package the deployment key cannot open with CRYPTO_NO_MATCHING_RECIPIENT, exit 1',
    async () => {
      const r = await run(['verify', '--bootstrap', bootstrapFor('for-someone-else.oapp')]);
      expect(r.stderr).toMatch(/^oapp: CRYPTO_NO_MATCHING_RECIPIENT: deployment "hello-1": /);
      expect(r.code).toBe(1);
    },
    CHILDREN_MS,
  );

  it(
    'refuses a record without one deployment key (the agent needs one) with CLI_DEPLOYMENT, exit 2',
    async () => {
      const r = await run(['verify', '--bootstrap', bootstrapFor('canonical.oapp', true)]);
      expect(r.stderr).toMatch(
        /^oapp: CLI_DEPLOYMENT: deployment "hello-1": keys must hold exactly one authenticated secret key/,
      );
      expect(r.code).toBe(2);
    },
    CHILDREN_MS,
  );

  it(
    'still decrypts nothing with the policy options: the signatures alone verify',
    async () => {
      const policy = [
        '--package-id',
        'hello-app',
        '--packager',
        'packager.pub',
        '--required-signer',
        'author.pub',
      ];
      const r = await run(['verify', 'indented.oapp', ...policy]);
      expect(r.stderr).toBe('');
      expect(r.out).not.toContain('content');
      expect(r.code).toBe(0);
    },
    CHILDREN_MS,
  );
});

describe('oapp at the repository root (issue 27)', () => {
  it('the root package depends on @org/cli, whose bin is a committed file (pnpm links it before any build)', () => {
    const root = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
    expect(root.devDependencies['@org/cli']).toBe('workspace:*');
    const cli = JSON.parse(readFileSync(join(ROOT, 'apps', 'cli', 'package.json'), 'utf8'));
    expect(cli.bin).toEqual({ oapp: './bin/oapp.js' });
    expect(cli.files).toContain('bin');
    // pnpm links a workspace bin only if the file exists at install time: in a fresh clone, before `pnpm build`.
    const tracked = execFileSync('git', ['ls-files', '--', 'apps/cli/bin/oapp.js'], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    expect(tracked.trim()).toBe('apps/cli/bin/oapp.js');
    expect(existsSync(join(ROOT, 'node_modules', '.bin', 'oapp'))).toBe(true);
    expect(realpathSync(join(ROOT, 'node_modules', '@org', 'cli'))).toBe(
      realpathSync(join(ROOT, 'apps', 'cli')),
    );
  });

  it(
    'pnpm exec oapp --version runs the built command line',
    () => {
      const r = spawnSync('pnpm', ['exec', 'oapp', '--version'], { cwd: ROOT, encoding: 'utf8' });
      expect(r.stderr).toBe('');
      expect(r.stdout).toMatch(/^oapp \d+\.\d+\.\d+\S* \(package format oapp\/v2; reads oapp\/v1\)\n$/);
      expect(r.status).toBe(0);
    },
    // pnpm's own start-up (about 1-2 s on this shared 2-core machine) before node runs oapp.
    20_000,
  );
});

describe('release tarballs: the public packages only (issue 27)', () => {
  it(
    'pack:release packs every public workspace package and no private one',
    () => {
      const r = spawnSync(process.execPath, ['scripts/pack-install/pack-release.mjs', '--list'], {
        cwd: ROOT,
        encoding: 'utf8',
      });
      expect(r.stderr).toBe('');
      expect(r.status).toBe(0);
      const dirs = r.stdout.trimEnd().split('\n');
      expect(dirs).toContain('apps/cli');
      const manifest = (d: string) => JSON.parse(readFileSync(join(ROOT, d, 'package.json'), 'utf8'));
      for (const d of dirs) expect(manifest(d).private, d).not.toBe(true);
      for (const d of ['packages/strict-json', 'packages/http-problem']) {
        expect(manifest(d).private).toBe(true);
        expect(dirs).not.toContain(d);
      }
      const root = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
      expect(root.scripts['pack:release']).toBe('node scripts/pack-install/pack-release.mjs');
    },
    // `pnpm ls -r` inside the script: 1-4 s on this shared 2-core machine.
    20_000,
  );

  it('the READMEs make the tarball set with pnpm -s pack:release and offer the tarballs before the registry', () => {
    const blocks = readmeBlocks();
    const packing = blocks.filter((b) => /\bpnpm\b.*\bpack\b/.test(b.body));
    expect(packing.map((b) => b.key)).toEqual(['README.md: pnpm install --frozen-lockfile && pnpm -s build']);
    expect(packing[0]!.body).toContain('pnpm -s pack:release /tmp/oapp-release');
    // Nothing is published yet: no block installs @org/cli from the registry.
    const registry = blocks.filter((b) => /npm install(?: -g)? @org\/cli\b/.test(b.body)).map((b) => b.key);
    expect(registry).toEqual([]);
    const text = (f: string) => readFileSync(join(ROOT, f), 'utf8');
    for (const f of ['README.md', 'apps/cli/README.md']) {
      expect(text(f).indexOf('/tmp/oapp-release/*.tgz'), f).toBeLessThan(
        text(f).indexOf('npm install @org/cli'),
      );
      expect(text(f), f).toMatch(
        /once (?:the packages are |it is )?published|published on\s+the npm registry yet/i,
      );
    }
  });
});
