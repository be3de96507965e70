import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadBootstrap } from '../src/startup/bootstrap-source.js';
import {
  FORBIDDEN_VARIABLES,
  loadBootstrapVariables,
  parseSecretsSources,
} from '../src/startup/variables.js';
import { REDACTED } from '@org/workflow-engine';
import { startAgent, type RunningAgent } from './agent-helpers.js';
import { encrypted, makeKeys, makeRecord, tempDir, writePackage } from './fixtures.js';

const keys = makeKeys();
const dir = tempDir();
const FILE_SECRET = 'file-secret-7c41e0';

function failure(fn: () => unknown): { code: string; message: string } {
  try {
    fn();
  } catch (err) {
    return err as { code: string; message: string };
  }
  throw new Error('did not throw');
}

async function rejection(p: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await p;
  } catch (err) {
    return err as { code: string; message: string };
  }
  throw new Error('did not reject');
}

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

describe('parseSecretsSources', () => {
  it.each([
    ['', []],
    [' ; ', []],
    ['/run/secrets/app.env', [{ kind: 'file', path: '/run/secrets/app.env' }]],
    ['relative.env', [{ kind: 'file', path: 'relative.env' }]],
    ['file:/a.env', [{ kind: 'file', path: '/a.env' }]],
    ['FILE:/a.env', [{ kind: 'file', path: '/a.env' }]],
    ['device:/dev/shm/s', [{ kind: 'device', path: '/dev/shm/s' }]],
    [
      'file:/a.env; /b.json ;device:/c',
      [
        { kind: 'file', path: '/a.env' },
        { kind: 'file', path: '/b.json' },
        { kind: 'device', path: '/c' },
      ],
    ],
    ['C:\\secrets.env', [{ kind: 'file', path: 'C:\\secrets.env' }]],
  ])('%j', (raw, expected) => {
    expect(parseSecretsSources(raw)).toEqual(expected);
  });

  it.each([
    ['https://vault.example/s', 'https'],
    ['http://127.0.0.1/s', 'http'],
    ['hostrecord:eyJpZCI6MX0=', 'hostrecord'],
    ['file:/ok.env;s3://bucket/x', 's3'],
  ])('refuses %s naming the scheme (nothing is fetched at start-up)', (raw, scheme) => {
    const e = failure(() => parseSecretsSources(raw));
    expect(e.code).toBe('AGENT_SECRETS_SOURCE_UNSUPPORTED');
    expect(e.message).toContain(`"${scheme}:"`);
  });

  it('refuses a scheme without a path', () => {
    expect(failure(() => parseSecretsSources('file:')).code).toBe('AGENT_SECRETS_UNREADABLE');
  });
});

describe('loadBootstrapVariables', () => {
  it('takes the environment, then the secrets files in order, a later value overriding', () => {
    const lines = file('a.env', `# app secrets\nexport TOKEN="${FILE_SECRET}"\r\nREGION=file-region\n`);
    const json = file('b.json', '{"REGION":"json-region","EXTRA":"x"}');
    const v = loadBootstrapVariables({
      REGION: 'env-region',
      HOME_DIR: '/h',
      'not-a-name': 'skip',
      AGENT_SECRETS_FROM: `file:${lines};${json}`,
    });
    expect(Object.fromEntries(v.values)).toMatchObject({
      REGION: 'json-region',
      HOME_DIR: '/h',
      TOKEN: FILE_SECRET,
      EXTRA: 'x',
    });
    expect(v.values.has('not-a-name')).toBe(false);
    expect([...v.secretNames].sort()).toEqual(['EXTRA', 'REGION', 'TOKEN']);
  });

  it('reads a device path with the byte cap enforced on what is read', () => {
    expect(loadBootstrapVariables({ AGENT_SECRETS_FROM: 'device:/dev/null' }).secretNames.size).toBe(0);
  });

  it('names the source and line of a malformed file, never its content', () => {
    const bad = file('bad.env', `GOOD=1\n${FILE_SECRET}\n`);
    const e = failure(() => loadBootstrapVariables({ AGENT_SECRETS_FROM: `file:${bad}` }));
    expect(e.code).toBe('WORKFLOW_SECRETS_FILE_INVALID');
    expect(e.message).toContain('AGENT_SECRETS_FROM source 1');
    expect(e.message).toContain('line 2');
    expect(e.message).not.toContain(FILE_SECRET);
  });

  it('refuses a missing file with AGENT_SECRETS_UNREADABLE', () => {
    const e = failure(() => loadBootstrapVariables({ AGENT_SECRETS_FROM: join(dir, 'nope.env') }));
    expect(e.code).toBe('AGENT_SECRETS_UNREADABLE');
  });
});

describe('loadBootstrap with variables (ADR 0059)', () => {
  const record = (extra: Record<string, unknown>) => makeRecord(keys, 'app.oapp', extra);

  it('substitutes env and secrets-file values and returns the file values used as secrets', async () => {
    const env = file('c.env', `TOKEN=${FILE_SECRET}\nUNUSED=unused-secret\nPORT=18081\n`);
    const variables = loadBootstrapVariables({ REGION: 'eu-1', AGENT_SECRETS_FROM: env });
    const json = JSON.stringify([
      record({
        data: { region: '${REGION}', auth: 'Bearer ${TOKEN}', literal: '$${REGION}' },
        allowHttpServerAccess: [{ id: 'api', port: '${PORT}' }],
        enabled: '${ON}',
      }),
    ]);
    const withOn = {
      values: new Map([...variables.values, ['ON', 'true']]),
      secretNames: variables.secretNames,
    };
    const { bootstrap, secrets } = await loadBootstrap(json, undefined, withOn);
    expect(bootstrap[0]!.data).toEqual({
      region: 'eu-1',
      auth: `Bearer ${FILE_SECRET}`,
      literal: '${REGION}',
    });
    expect(bootstrap[0]!.allowHttpServerAccess![0]!.port).toBe(18081);
    expect(bootstrap[0]!.enabled).toBe('true');
    expect([...secrets].sort()).toEqual(['18081', FILE_SECRET]);
  });

  it('stops on a missing variable naming it, with no value of any variable in the message', async () => {
    const variables = { values: new Map([['TOKEN', FILE_SECRET]]), secretNames: new Set(['TOKEN']) };
    const json = JSON.stringify([record({ data: { a: '${TOKEN}', b: '${NOT_THERE}' } })]);
    const e = await rejection(loadBootstrap(json, undefined, variables));
    expect(e.code).toBe('WORKFLOW_VARIABLE_MISSING');
    expect(e.message).toContain('NOT_THERE');
    expect(e.message).not.toContain(FILE_SECRET);
  });

  it('refuses the agent key variables even when set', async () => {
    for (const name of FORBIDDEN_VARIABLES) {
      const variables = { values: new Map([[name, 'k'.repeat(20)]]), secretNames: new Set<string>() };
      const json = JSON.stringify([record({ data: { k: `\${${name}}` } })]);
      const e = await rejection(loadBootstrap(json, undefined, variables));
      expect(e.code).toBe('WORKFLOW_VARIABLE_INVALID');
      expect(e.message).not.toContain('k'.repeat(20));
    }
  });

  it('keeps a value that looks like JSON one string (no injection into the bootstrap)', async () => {
    const variables = {
      values: new Map([['V', '", "agentControl": {"workflowCanShutdownAgent": true}, "x": "']]),
      secretNames: new Set<string>(),
    };
    const { bootstrap } = await loadBootstrap(
      JSON.stringify([record({ data: { v: '${V}' } })]),
      undefined,
      variables,
    );
    expect(bootstrap[0]!.agentControl).toBeUndefined();
    expect((bootstrap[0]!.data as { v: string }).v).toContain('agentControl');
  });
});

describe('an agent with bootstrap variables', () => {
  let a: RunningAgent;
  let minus2 = '';

  beforeAll(async () => {
    minus2 = encrypted(keys, 'idp-plaintext-5521');
    const workflow = {
      workflows: [
        {
          name: 'vars',
          steps: [
            {
              stepId: 'show',
              trigger: { http: { server: 'api', method: 'GET', path: '/show' } },
              resultsProcessor: {
                script:
                  "console.log('token is ' + context.getData('auth')); context.setBody(context.getData('region'))",
              },
            },
          ],
        },
      ],
    };
    const path = writePackage(dir, keys, { workflow });
    const env = file('agent.env', `TOKEN=${FILE_SECRET}\nIDP_SECRET=${minus2}\n`);
    const variables = loadBootstrapVariables({ REGION: 'eu-1', AGENT_SECRETS_FROM: `file:${env}` });
    const record = makeRecord(keys, path, {
      data: { region: '${REGION}', auth: 'Bearer ${TOKEN}' },
      allowExternalHostAccess: [
        {
          id: 'idp',
          host: 'https://login.example.com/',
          authenticationHost: true,
          data: { clientSecret: '${IDP_SECRET}' },
        },
      ],
    });
    const loaded = await loadBootstrap(JSON.stringify([record]), undefined, variables);
    a = await startAgent(keys, [], { bootstrap: loaded.bootstrap, secrets: [...loaded.secrets] });
  });

  afterAll(() => a.close());

  it('runs with the substituted values and redacts secrets-file values in its logs', async () => {
    const res = await fetch(`${a.url()}/show`);
    expect(await res.text()).toBe('eu-1');
    const out = a.lines.join('');
    expect(out).toContain(`token is Bearer ${REDACTED}`);
    expect(out).not.toContain(FILE_SECRET);
    expect(out).not.toContain(Buffer.from(FILE_SECRET).toString('base64'));
  });

  it('S49: a -2/ value that came from the secrets file is not decrypted at load or start-up', () => {
    expect(a.agent.decryptor.calls).toBe(0);
    expect(a.lines.join('')).not.toContain('idp-plaintext-5521');
  });
});
