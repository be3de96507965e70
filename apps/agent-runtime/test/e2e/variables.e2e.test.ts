import { existsSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { REDACTED } from '@org/workflow-engine';
import { tempDir } from '../fixtures.js';
import { freePort, killAll, listeningLine, spawnMain } from './spawn.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const AGENT = join(HERE, '..', '..', 'dist', 'main.js');
const FILE_SECRET = 'e2e-file-secret-41c9';
const ENV_VALUE = 'env-value-83d2';
const dir = tempDir();

const WORKFLOW = {
  workflows: [
    {
      name: 'vars',
      steps: [
        {
          stepId: 'show',
          trigger: { http: { server: 'api', method: 'GET', path: '/show' } },
          resultsProcessor: {
            script:
              "console.log('auth ' + context.getData('auth')); context.setBody(context.getData('fromEnv') + '|' + context.getData('overridden') + '|' + context.getData('literal'))",
          },
        },
      ],
    },
  ],
};

function write(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

function bootstrap(data: Record<string, string>): string {
  const wf = write('vars.workflow.json', JSON.stringify(WORKFLOW));
  return write(
    `bootstrap-${Math.random().toString(36).slice(2)}.json`,
    JSON.stringify({
      deploymentId: 'vars-1',
      remoteConfiguration: wf,
      allowHttpServerAccess: [{ id: 'api', port: '${AGENT_PORT}' }],
      data,
    }),
  );
}

afterEach(() => killAll());

describe.skipIf(!existsSync(AGENT))('agent dist/main.js with bootstrap variables', () => {
  it(
    'resolves ${VAR} from the environment and from an AGENT_SECRETS_FROM file (which wins), and redacts file values',
    { timeout: 30_000 },
    async () => {
      const port = await freePort();
      const secrets = write(
        'agent.env',
        `# secrets for the e2e agent\nexport API_TOKEN="${FILE_SECRET}"\r\nOVERRIDDEN=from-file\n`,
      );
      const agent = spawnMain(AGENT, {
        AGENT_BOOTSTRAP: bootstrap({
          fromEnv: '${FROM_ENV}',
          overridden: '${OVERRIDDEN}',
          auth: 'Bearer ${API_TOKEN}',
          literal: '$${NOT_A_VARIABLE}',
        }),
        AGENT_ALLOW_UNPACKAGED: 'true',
        AGENT_PORT: String(port),
        FROM_ENV: ENV_VALUE,
        OVERRIDDEN: 'from-env',
        AGENT_SECRETS_FROM: `file:${secrets}`,
      });
      const line = await listeningLine(agent);
      expect(line['servers']).toEqual([{ deploymentId: 'vars-1', id: 'api', port, address: '127.0.0.1' }]);
      const res = await fetch(`http://127.0.0.1:${port}/show`);
      expect(await res.text()).toBe(`${ENV_VALUE}|from-file|\${NOT_A_VARIABLE}`);
      agent.proc.kill('SIGTERM');
      expect(await agent.exited).toBe(0);
      const output = agent.stdout() + agent.stderr();
      expect(output).toContain(`auth Bearer ${REDACTED}`);
      expect(output).not.toContain(FILE_SECRET);
    },
  );

  it(
    'refuses a missing variable: exit 1, one fatal JSON line naming it and no value, no listener',
    { timeout: 30_000 },
    async () => {
      const secrets = write('refuse.env', `API_TOKEN=${FILE_SECRET}\n`);
      const agent = spawnMain(AGENT, {
        AGENT_BOOTSTRAP: bootstrap({ a: '${API_TOKEN}', b: '${FROM_ENV}', c: 'x ${NOT_SET_ANYWHERE}' }),
        AGENT_ALLOW_UNPACKAGED: 'true',
        AGENT_PORT: String(await freePort()),
        FROM_ENV: ENV_VALUE,
        AGENT_SECRETS_FROM: secrets,
      });
      expect(await agent.exited).toBe(1);
      const lines = agent.stderr().trim().split('\n');
      expect(lines).toHaveLength(1);
      const fatal = JSON.parse(lines[0]!) as {
        level: string;
        code: string;
        msg: string;
        problems?: string[];
      };
      expect(fatal).toMatchObject({ level: 'fatal', code: 'WORKFLOW_VARIABLE_MISSING' });
      expect(fatal.msg).toContain('NOT_SET_ANYWHERE');
      expect(fatal.msg).toContain('/0/data/c');
      // The compiler's `details.errors` become the `problems` list, one `pointer: detail` line each.
      expect(fatal.problems).toEqual([expect.stringMatching(/^\/0\/data\/c: .*NOT_SET_ANYWHERE/)]);
      const all = agent.stdout() + agent.stderr();
      expect(all).not.toContain(FILE_SECRET);
      expect(all).not.toContain(ENV_VALUE);
      expect(all).not.toContain('"listening"');
      expect(all).not.toMatch(/\n\s+at /);
    },
  );

  it(
    'never quotes a secrets-file value in a start-up error (a bootstrap rule naming a key id)',
    { timeout: 30_000 },
    async () => {
      const secrets = write('quote.env', `PACKAGER_ID=${FILE_SECRET}\n`);
      const wf = write('quote.workflow.json', JSON.stringify(WORKFLOW));
      const boot = write(
        'quote-bootstrap.json',
        JSON.stringify({
          deploymentId: 'vars-2',
          remoteConfiguration: wf,
          packaging: { packageId: 'p', packagerIdentities: ['${PACKAGER_ID}'] },
        }),
      );
      const agent = spawnMain(AGENT, { AGENT_BOOTSTRAP: boot, AGENT_SECRETS_FROM: secrets });
      expect(await agent.exited).toBe(1);
      const all = agent.stdout() + agent.stderr();
      expect(all).toContain('"level":"fatal"');
      expect(all).not.toContain(FILE_SECRET);
    },
  );

  it.each([['https://vault.example/agent.env'], ['hostrecord:eyJpZCI6MX0=']])(
    'refuses AGENT_SECRETS_FROM=%s at start-up, naming the scheme',
    { timeout: 30_000 },
    async (source) => {
      const agent = spawnMain(AGENT, {
        AGENT_BOOTSTRAP: bootstrap({ a: 'plain' }),
        AGENT_ALLOW_UNPACKAGED: 'true',
        AGENT_PORT: String(await freePort()),
        AGENT_SECRETS_FROM: source,
      });
      expect(await agent.exited).toBe(1);
      const fatal = JSON.parse(agent.stderr().trim()) as { code: string; msg: string };
      expect(fatal.code).toBe('AGENT_SECRETS_SOURCE_UNSUPPORTED');
      expect(fatal.msg).toContain(`"${source.split(':')[0]}:"`);
    },
  );
});
