import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AGENT_MAIN,
  freePort,
  HELLO_WORKFLOW,
  keyHex,
  listening,
  oapp,
  PACKAGER_MAIN,
  spawnMain,
  tempDir,
  type Child,
} from './helpers.js';

// The command line against the real packager service and the real agent (both spawned from their dist/main.js):
// same outputs as the packager's endpoints, and packages and bootstraps the agent accepts and runs.

const dir = tempDir();
const run = (args: string[]) => oapp(args, { cwd: dir });
const hex = (f: string) => keyHex(join(dir, f));
const children: Child[] = [];
let packager: Child;
let base = '';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- compared whole with the command line's JSON
async function post(path: string, body: Uint8Array | string, type: string): Promise<any> {
  const res = await fetch(`${base}${path}`, {
    method: 'POST',
    body,
    headers: { 'content-type': type, accept: 'application/json' },
  });
  expect(res.status).toBe(200);
  return res.json();
}

function startAgent(env: Record<string, string>): Child {
  const agent = spawnMain(AGENT_MAIN, env, dir);
  children.push(agent);
  return agent;
}

async function stop(child: Child): Promise<void> {
  child.proc.kill('SIGTERM');
  await child.exited;
}

beforeAll(async () => {
  packager = spawnMain(PACKAGER_MAIN, { PORT: '0', PACKAGER_RESOURCE_DIRS: dir });
  children.push(packager);
  base = `http://127.0.0.1:${(await listening(packager))['port'] as number}`;
  // One key straight from GET /key-gen: the command line reads that JSON as a key file too.
  const generated = await (await fetch(`${base}/key-gen?purpose=authenticated`)).text();
  writeFileSync(join(dir, 'packager.json'), generated, { mode: 0o600 });
  for (const k of ['deployment', 'agent', 'receiver'])
    expect((await run(['keygen', '--purpose', 'authenticated', '-o', `${k}.key`])).code).toBe(0);
  for (const k of ['author', 'reviewer']) await run(['keygen', '--purpose', 'sign', '-o', `${k}.key`]);
  writeFileSync(join(dir, 'workflow.json'), JSON.stringify(HELLO_WORKFLOW));
  const r = await run([
    'package',
    'workflow.json',
    '-o',
    'hello.oapp',
    '--package-id',
    'hello-app',
    '--packager-key',
    'packager.json',
    '--recipient',
    'deployment.pub',
    '--signer',
    'author.key',
    '--sign-text',
    'release 1',
  ]);
  expect(r.stderr).toBe('');
}, 120_000);

afterAll(async () => {
  for (const c of children) c.proc.kill('SIGKILL');
  await Promise.all(children.map((c) => c.exited));
});

describe('same outputs as the packager service', () => {
  it('POST /workflow-inspect accepts a package made by oapp package and says what oapp inspect --json says', async () => {
    const viaApi = await post(
      '/workflow-inspect',
      readFileSync(join(dir, 'hello.oapp')),
      'application/octet-stream',
    );
    const viaCli = (await run(['inspect', 'hello.oapp', '--json'])).json();
    expect(viaCli).toEqual(viaApi);
    expect(viaApi.packager.publicKeyHex).toBe(
      JSON.parse(readFileSync(join(dir, 'packager.json'), 'utf8')).keyPair.publicKeyHex,
    );
  });

  it('hash --json and compile --json equal /workflow-hash and /workflow-compile', async () => {
    const wf = readFileSync(join(dir, 'workflow.json'));
    expect((await run(['hash', 'workflow.json', '--json'])).json()).toEqual(
      await post('/workflow-hash', wf, 'application/json'),
    );
    expect((await run(['compile', 'workflow.json', '--json'])).json()).toEqual(
      await post('/workflow-compile', wf, 'application/json'),
    );
  });

  it('build --json equals /build-workflows for the same manifest and directory', async () => {
    const manifest = JSON.stringify({
      includes: [
        {
          sourceWorkflow: 'workflow.json',
          customizations: [
            {
              op: 'value',
              sourcePath: '$.workflows[0].steps[0].trigger.http.path',
              sourceValue: '/v2/hello',
            },
          ],
        },
      ],
    });
    writeFileSync(join(dir, 'manifest.json'), manifest);
    const viaCli = (await run(['build', 'manifest.json', '--json'])).json();
    expect(viaCli).toEqual(await post('/build-workflows', manifest, 'application/json'));
    expect(viaCli.workflow.workflows[0].steps[0].trigger.http.path).toBe('/v2/hello');
  });
});

describe('the agent runs what the command line makes', () => {
  async function hello(port: number): Promise<unknown> {
    const res = await fetch(`http://127.0.0.1:${port}/hello`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'world' }),
    });
    expect(res.status).toBe(200);
    return res.json();
  }

  function bootstrap(
    port: number,
    over: { remote: string; packager: string; secret: string; signers: string[] },
  ) {
    const signers = over.signers.map((id) => ({
      id,
      purpose: 'sign',
      type: 'public',
      keyHex: hex(`${id}.pub`),
    }));
    const packagerHex =
      over.packager === 'packager'
        ? JSON.parse(readFileSync(join(dir, 'packager.json'), 'utf8')).keyPair.publicKeyHex
        : hex(`${over.packager}.pub`);
    return [
      {
        deploymentId: 'hello-1',
        remoteConfiguration: over.remote,
        packaging: {
          packageId: 'hello-app',
          packagerIdentities: [over.packager],
          requiredSigners: over.signers.map((id) => ({ id })),
        },
        keys: [
          { id: over.packager, purpose: 'authenticated', type: 'public', keyHex: packagerHex },
          {
            id: 'this-deployment',
            purpose: 'authenticated',
            type: 'secret',
            keyHex: hex(`${over.secret}.key`),
          },
          ...signers,
        ],
        allowHttpServerAccess: [{ id: 'api', port }],
      },
    ];
  }

  it('an encrypted bootstrap from encrypt-bootstrap and a package from package: the agent starts and answers', async () => {
    const port = await freePort();
    const b = bootstrap(port, {
      remote: 'hello.oapp',
      packager: 'packager',
      secret: 'deployment',
      signers: ['author'],
    });
    writeFileSync(join(dir, 'bootstrap.json'), JSON.stringify(b));
    // The command line accepts what the agent will accept.
    expect((await run(['verify', '--bootstrap', 'bootstrap.json'])).code).toBe(0);
    const enc = await run([
      'encrypt-bootstrap',
      'bootstrap.json',
      '-o',
      'bootstrap.enc',
      '--packager-key',
      'packager.json',
      '--recipient',
      'agent.pub',
    ]);
    expect(enc.code).toBe(0);
    const sender = JSON.parse(readFileSync(join(dir, 'packager.json'), 'utf8')).keyPair
      .publicKeyHex as string;
    const agent = startAgent({
      AGENT_BOOTSTRAP: readFileSync(join(dir, 'bootstrap.enc'), 'utf8'),
      AGENT_BOOTSTRAP_SECRETKEY: `${sender}/${hex('agent.key')}`,
    });
    await listening(agent);
    expect(await hello(port)).toEqual({ greeting: 'hello world' });
    await stop(agent);
  }, 120_000);

  it('a package endorsed with envelope runs under the receiver policy (new packager, both signers)', async () => {
    const r = await run([
      'envelope',
      'hello.oapp',
      '-o',
      'endorsed.oapp',
      '--bootstrap',
      'bootstrap.json',
      '--packager-key',
      'receiver.key',
      '--recipient',
      'agent.pub',
      '--signer',
      'reviewer.key',
      '--sign-text',
      'reviewed',
    ]);
    expect(r.stderr).toBe('');
    const port = await freePort();
    const b = bootstrap(port, {
      remote: 'endorsed.oapp',
      packager: 'receiver',
      secret: 'agent',
      signers: ['author', 'reviewer'],
    });
    writeFileSync(join(dir, 'endorsed-bootstrap.json'), JSON.stringify(b));
    const agent = startAgent({ AGENT_BOOTSTRAP: join(dir, 'endorsed-bootstrap.json') });
    await listening(agent);
    expect(await hello(port)).toEqual({ greeting: 'hello world' });
    await stop(agent);
  }, 120_000);
});
