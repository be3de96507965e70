import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseKey } from '@org/envelope-crypto';
import { createPackage } from '@org/oapp-format';
import { canonicalize } from '@org/workflow-compiler';
import { REDACTED } from '@org/workflow-engine';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startUpstream, type Upstream } from '../agent-helpers.js';
import { POLICY_CALL_STEPS, POLICY_REFUSALS, tempDir } from '../fixtures.js';
import { freePort, killAll, listeningLine, spawnMain, type Child } from './spawn.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const AGENT = join(HERE, '..', '..', 'dist', 'main.js');
const PACKAGER = join(HERE, '..', '..', '..', 'packager-api', 'dist', 'main.js');
const SECRET = 'e2e-restricted-9d2f61';
const LIMIT = 4096;

interface Pair {
  publicKeyHex: string;
  secretKeyHex: string;
}

const WORKFLOW = {
  workflows: [
    {
      name: 'e2e',
      steps: [
        {
          stepId: 'echo',
          trigger: { http: { server: 'api', method: 'POST', path: '/echo' } },
          resultsProcessor: { script: "context.setBody(context.getBody() + '!')" },
        },
        {
          stepId: 'bin',
          trigger: { http: { server: 'api', method: 'PUT', path: '/bin' } },
          resultsProcessor: { script: "context.setBody('n=' + context.getStream().readAll().length)" },
        },
        {
          stepId: 'upload',
          trigger: {
            http: { server: 'api', method: 'POST', path: '/upload', multiPartUploadByteLimit: LIMIT },
          },
          resultsProcessor: {
            script:
              "const b = context.getStream().readAll(); context.setBody(context.getBody() + ':' + b.length);",
          },
        },
        {
          stepId: 'gateway',
          trigger: { http: { server: 'api', method: 'POST', path: '/call' } },
          resultsProcessor: {
            script:
              "const r = context.sendToStep(context.getBody(), ''); context.setBody(JSON.stringify({ errored: r.isErrored(), errors: r.getAllErrors() }));",
          },
        },
        {
          stepId: 'slow',
          trigger: { http: { server: 'api', method: 'GET', path: '/slow' } },
          resultsProcessor: { script: "context.sleep(400); context.setBody('slow done')" },
        },
        ...POLICY_CALL_STEPS,
        {
          stepId: 'with-auth',
          trigger: { http: { server: 'api', method: 'POST', path: '/auth' } },
          authenticationProcessor: {
            script:
              "const d = JSON.parse(context.getRestrictedDataFromHost('idp')); const t = context.callAuthenticationHost('idp', 'token', { method: 'POST', body: d.clientSecret }); console.log('secret ' + d.clientSecret + ' got ' + t.getStatus());",
          },
          resultsProcessor: { script: "context.setBody('authenticated')" },
        },
      ],
    },
  ],
};

let packager: Child | undefined;
let pbase = '';
let up: Upstream;
const dir = tempDir();
const keys: Record<string, Pair> = {};
let packagePath = '';

async function keyGen(purpose: string): Promise<Pair> {
  const res = await fetch(`${pbase}/key-gen?purpose=${purpose}`);
  return ((await res.json()) as { keyPair: Pair }).keyPair;
}

const spec = (id: string, purpose: string, type: 'public' | 'secret') => ({
  id,
  purpose,
  type,
  keyHex: type === 'public' ? keys[id]!.publicKeyHex : keys[id]!.secretKeyHex,
});

async function packagerPost(
  path: string,
  body: object,
  stream: string | Uint8Array,
  accept: string,
): Promise<Uint8Array> {
  const form = new FormData();
  form.append('body', JSON.stringify(body));
  form.append('stream', new Blob([stream], { type: 'application/octet-stream' }), 'stream');
  const res = await fetch(`${pbase}${path}`, { method: 'POST', body: form, headers: { accept } });
  const bytes = new Uint8Array(await res.arrayBuffer());
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${new TextDecoder().decode(bytes)}`);
  return bytes;
}

const toAgent = () => ({
  keys: [spec('packager', 'authenticated', 'secret'), spec('agent', 'authenticated', 'public')],
  encryptionKeys: ['agent'],
  packagerIdentityPrivateKey: 'packager',
});

function record(
  port: number,
  over: { packaging?: object; keys?: object[]; remoteConfiguration?: string } = {},
) {
  const base = `http://127.0.0.1:${up.port}/`;
  return {
    deploymentId: 'e2e-1',
    remoteConfiguration: over.remoteConfiguration ?? packagePath,
    packaging: over.packaging ?? {
      packageId: 'e2e-app',
      packagerIdentities: ['packager'],
      requiredSigners: [{ id: 'author' }],
    },
    keys: over.keys ?? [
      spec('packager', 'authenticated', 'public'),
      spec('deployment', 'authenticated', 'secret'),
      spec('author', 'sign', 'public'),
      spec('review', 'sign', 'public'),
    ],
    allowHttpServerAccess: [{ id: 'api', port }],
    allowExternalHostAccess: [
      { id: 'up', host: base, allowList: [{ method: 'GET', uriPattern: '/v1/users/[0-9]+' }] },
      {
        id: 'idp',
        host: base,
        authenticationHost: true,
        allowList: [{ method: 'POST', uriPattern: '/token' }],
        data: { clientId: 'e2e-client', clientSecret: '' },
      },
    ],
  };
}

async function encryptBootstrap(records: object[]): Promise<string> {
  return new TextDecoder().decode(
    await packagerPost('/bootstrap-encrypt', toAgent(), JSON.stringify(records), 'application/octet-stream'),
  );
}

function agentEnv(bootstrap: string): Record<string, string> {
  const tuple = `${keys['packager']!.publicKeyHex}/${keys['agent']!.secretKeyHex}`;
  return {
    AGENT_BOOTSTRAP: bootstrap,
    AGENT_BOOTSTRAP_SECRETKEY: tuple,
    AGENT_STRING_SECRETKEYS: ` , ${tuple} ,, `,
    AGENT_ALLOW_PRIVATE_NETWORK_HOSTS: 'up,idp',
  };
}

beforeAll(async () => {
  if (!existsSync(AGENT) || !existsSync(PACKAGER)) return;
  packager = spawnMain(PACKAGER, { PORT: '0', PACKAGER_RESOURCE_DIRS: dir });
  pbase = `http://127.0.0.1:${(await listeningLine(packager))['port'] as number}`;
  up = await startUpstream();
  for (const id of ['packager', 'deployment', 'agent']) keys[id] = await keyGen('authenticated');
  for (const id of ['author', 'review']) keys[id] = await keyGen('sign');
  const pkg = await packagerPost(
    '/workflow-package',
    {
      packageId: 'e2e-app',
      keys: [
        spec('packager', 'authenticated', 'secret'),
        spec('deployment', 'authenticated', 'public'),
        spec('author', 'sign', 'secret'),
      ],
      signers: [{ key: 'author', signText: 'e2e release' }],
      encryptionKeys: ['deployment'],
      packagerIdentityPrivateKey: 'packager',
    },
    JSON.stringify(WORKFLOW),
    'application/octet-stream',
  );
  packagePath = join(dir, 'e2e-app.oapp');
  writeFileSync(packagePath, pkg);
}, 60_000);

// A failed or timed-out test must not leave an agent listening (the packager stays for the next test).
afterEach(() => killAll(packager));

afterAll(async () => {
  await killAll();
  if (packager === undefined) return;
  packager.proc.kill('SIGTERM');
  await packager.exited;
  await up.close();
});

// Both apps must be built (`pnpm -r build`), as in the packager's own e2e test.
describe.skipIf(!existsSync(AGENT) || !existsSync(PACKAGER))('agent dist/main.js end to end', () => {
  it(
    'runs a packaged workflow from an encrypted bootstrap and keeps the restricted value out of its output',
    { timeout: 60_000 },
    async () => {
      const secret = new TextDecoder().decode(
        await packagerPost('/string-encrypt', toAgent(), SECRET, 'text/plain'),
      );
      expect(secret.startsWith('-2/')).toBe(true);
      const port = await freePort();
      const r = record(port);
      (r.allowExternalHostAccess[1]!.data as Record<string, string>)['clientSecret'] = secret;
      const agent = spawnMain(AGENT, agentEnv(await encryptBootstrap([r])));
      const line = await listeningLine(agent);
      expect(line['servers']).toEqual([{ deploymentId: 'e2e-1', id: 'api', port, address: '127.0.0.1' }]);
      const base = `http://127.0.0.1:${port}`;
      const post = (path: string, body: string | FormData, headers: Record<string, string> = {}) =>
        fetch(`${base}${path}`, { method: 'POST', body, headers });
      const code = async (res: Response) => ((await res.json()) as { code: string }).code;
      const form = (bytes: number) => {
        const f = new FormData();
        f.append('body', 'meta');
        f.append('stream', new Blob([new Uint8Array(bytes)], { type: 'application/octet-stream' }), 'f');
        return f;
      };

      // JSON, binary and multipart (at, over and without the limit).
      expect(await (await post('/echo', '{"a":1}', { 'content-type': 'application/json' })).text()).toBe(
        '{"a":1}!',
      );
      const bin = await fetch(`${base}/bin`, {
        method: 'PUT',
        body: new Uint8Array(5000),
        headers: { 'content-type': 'application/octet-stream' },
      });
      expect(await bin.text()).toBe('n=5000');
      expect(await (await post('/upload', form(LIMIT))).text()).toBe(`meta:${LIMIT}`);
      const over = await post('/upload', form(LIMIT + 1));
      expect([over.status, await code(over)]).toEqual([413, 'UPLOAD_FILE_TOO_LARGE']);
      const without = await post('/echo', form(10));
      expect([without.status, await code(without)]).toEqual([415, 'UPLOAD_NOT_MULTIPART']);

      // Outbound: allowed path; refused path, method, undeclared host, authentication host from a normal processor.
      const before = up.requests.length;
      const viaGateway = async (step: string) =>
        (await (await post('/call', step)).json()) as { errored: boolean; errors: string[] };
      expect((await viaGateway('allowed')).errored).toBe(false);
      expect(up.requests.length).toBe(before + 1);
      for (const [step, c] of POLICY_REFUSALS) {
        const r2 = await viaGateway(step);
        expect(r2.errored).toBe(true);
        expect(r2.errors.join(' ')).toContain(c);
      }
      expect(up.requests.length).toBe(before + 1);

      // The restricted value is decrypted in the authentication processor and reaches only its host.
      expect(await (await post('/auth', 'x')).text()).toBe('authenticated');
      expect(up.requests.at(-1)).toMatchObject({ url: '/token', body: SECRET });

      agent.proc.kill('SIGTERM');
      expect(await agent.exited).toBe(0);
      const output = agent.stdout() + agent.stderr();
      expect(output).toContain(`secret ${REDACTED} got 200`);
      expect(output).not.toContain(SECRET);
      expect(output).not.toContain(Buffer.from(SECRET).toString('base64'));
    },
  );

  /** A package with the e2e keys, signed by author, around `text` as is (what no packager writes). */
  const sealedByE2eKeys = (name: string, text: string): string => {
    const key = (id: string, purpose: 'authenticated' | 'sign', type: 'public' | 'secret') =>
      parseKey({
        id,
        purpose,
        type,
        keyHex: type === 'secret' ? keys[id]!.secretKeyHex : keys[id]!.publicKeyHex,
      });
    const bytes = createPackage({
      packageId: 'e2e-app',
      content: new TextEncoder().encode(text),
      packagerSecretKey: key('packager', 'authenticated', 'secret'),
      recipients: [key('deployment', 'authenticated', 'public')],
      signers: [{ secretKey: key('author', 'sign', 'secret'), signText: 'e2e release' }],
    });
    const path = join(dir, name);
    writeFileSync(path, bytes);
    return path;
  };

  const refusals: [string, () => object, string][] = [
    [
      'a wrong packageId',
      () => ({ packaging: { packageId: 'other-app', packagerIdentities: ['packager'] } }),
      'POLICY_PACKAGE_ID_MISMATCH',
    ],
    [
      'an untrusted packager identity',
      () => ({
        keys: [
          { ...spec('agent', 'authenticated', 'public'), id: 'packager' },
          spec('deployment', 'authenticated', 'secret'),
          spec('author', 'sign', 'public'),
          spec('review', 'sign', 'public'),
        ],
      }),
      'POLICY_PACKAGER_NOT_TRUSTED',
    ],
    [
      'a missing required signer',
      () => ({
        packaging: {
          packageId: 'e2e-app',
          packagerIdentities: ['packager'],
          requiredSigners: [{ id: 'review' }],
        },
      }),
      'POLICY_REQUIRED_SIGNER_MISSING',
    ],
    [
      'a threshold not met',
      () => ({
        packaging: {
          packageId: 'e2e-app',
          packagerIdentities: ['packager'],
          requiredSigners: [{ id: 'author' }],
          additionalSigners: [{ id: 'review' }],
          requiredAdditionalSignerCount: 1,
        },
      }),
      'POLICY_SIGNER_THRESHOLD_NOT_MET',
    ],
    // Regression (ADR 0085): app content is the JCS form of a compiled workflow, nothing else.
    [
      'an uncompiled workflow as package content',
      () => ({
        remoteConfiguration: sealedByE2eKeys(
          'uncompiled.oapp',
          canonicalize({
            workflows: [
              { name: 'e2e', steps: [{ stepId: 'echo', resultsProcessor: { resource: 'echo.js' } }] },
            ],
          }),
        ),
      }),
      'WORKFLOW_NOT_COMPILED',
    ],
    [
      'non-canonical JSON of a compiled workflow as package content',
      () => ({ remoteConfiguration: sealedByE2eKeys('pretty.oapp', JSON.stringify(WORKFLOW, null, 2)) }),
      'WORKFLOW_NOT_CANONICAL',
    ],
    [
      'a tampered package',
      () => {
        const bytes = readFileSync(packagePath);
        bytes[bytes.length - 5]! ^= 0x01;
        const path = join(dir, 'tampered.oapp');
        writeFileSync(path, bytes);
        return { remoteConfiguration: path };
      },
      'CRYPTO_',
    ],
  ];

  it.each(refusals)(
    'refuses %s at deploy time: exit 1, one fatal line, no listener',
    { timeout: 30_000 },
    async (_name, over, expected) => {
      const port = await freePort();
      const agent = spawnMain(AGENT, agentEnv(await encryptBootstrap([record(port, over())])));
      expect(await agent.exited).toBe(1);
      const lines = agent.stderr().trim().split('\n');
      expect(lines).toHaveLength(1);
      const fatal = JSON.parse(lines[0]!) as { level: string; code: string; msg: string };
      expect(fatal.level).toBe('fatal');
      expect(fatal.code.startsWith(expected)).toBe(true);
      expect(agent.stdout()).not.toContain('"listening"');
      expect(agent.stderr()).not.toMatch(/\n\s+at /);
    },
  );

  it(
    'refuses to start without AGENT_BOOTSTRAP_SECRETKEY for an encrypted bootstrap (S44)',
    { timeout: 30_000 },
    async () => {
      const env = agentEnv(await encryptBootstrap([record(await freePort())]));
      delete env['AGENT_BOOTSTRAP_SECRETKEY'];
      const agent = spawnMain(AGENT, env);
      expect(await agent.exited).toBe(1);
      expect(JSON.parse(agent.stderr()).code).toBe('AGENT_BOOTSTRAP_SECRETKEY_MISSING');
    },
  );
});
