import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeKeys, makeRecord, tempDir, writePackage } from './fixtures.js';
import { startAgent, until, type RunningAgent } from './agent-helpers.js';

// context.files(id) and the fileWatcher trigger in the agent: a real package, real files, real fetch.

const keys = makeKeys();
const dir = tempDir();
const inbox = join(dir, 'inbox');

const workflow = {
  workflows: [
    {
      name: 'files',
      steps: [
        {
          stepId: 'put',
          trigger: { http: { server: 'api', method: 'POST', path: '/put' } },
          resultsProcessor: {
            script: "context.files('inbox').write('app.log', context.getBody()); context.setBody('ok')",
          },
        },
        {
          stepId: 'get',
          trigger: { http: { server: 'api', method: 'GET', path: '/get' } },
          resultsProcessor: {
            script: "context.setBody(context.files('inbox').read(context.getProperty('http.query')))",
          },
        },
        {
          stepId: 'tail',
          trigger: { fileWatcher: { bootstrapFileId: 'inbox', eventSplitter: '\\n', splitAtEnd: true } },
          resultsProcessor: {
            script:
              "for (const e of JSON.parse(context.getBody())) context.diagnosticLog('line ' + e.message.trim())",
          },
        },
      ],
    },
  ],
};

type Line = Record<string, unknown>;

describe('files in the agent', () => {
  let a: RunningAgent;
  beforeAll(async () => {
    mkdirSync(inbox);
    writeFileSync(join(dir, 'secret.txt'), 'outside');
    a = await startAgent(keys, [
      makeRecord(keys, writePackage(dir, keys, { workflow }), {
        allowHttpServerAccess: [{ id: 'api', port: 9 }],
        allowFileAccess: [{ id: 'inbox', directoryOrFile: inbox, READ: true, WRITE: true, required: true }],
      }),
    ]);
  });
  afterAll(() => a?.close());

  it('a step writes a file, the fileWatcher step receives its lines', async () => {
    const res = await fetch(`${a.url('api')}/put`, { method: 'POST', body: 'first\nsecond\n' });
    expect(await res.text()).toBe('ok');
    const logs = () => a.lines.map((l) => JSON.parse(l) as Line).map((l) => l['msg']);
    await until(() => logs().includes('line second'), 10_000);
    expect(logs().filter((m) => m === 'line first')).toHaveLength(1);
    expect(await (await fetch(`${a.url('api')}/get?app.log`)).text()).toBe('first\nsecond\n');
  });

  it('a path out of the entry fails the run with Not permitted; nothing outside is read', async () => {
    const res = await fetch(`${a.url('api')}/get?../secret.txt`);
    expect(res.status).toBe(500);
    const warn = a.lines
      .map((l) => JSON.parse(l) as Line)
      .find((l) => l['stepId'] === 'get' && l['msg'] === 'step errored');
    expect(String(warn?.['errors'])).toContain('AGENT_FILE_NOT_PERMITTED: Not permitted (FC2)');
    expect(a.lines.join('')).not.toContain('outside');
    expect(existsSync(join(inbox, 'app.log'))).toBe(true);
  });
});
