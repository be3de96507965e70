import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { compileWorkflow, hashWorkflow } from '@org/workflow-compiler';
import { beforeAll, describe, expect, it } from 'vitest';
import { HELLO_WORKFLOW, oapp, tempDir } from './helpers.js';

const dir = tempDir();
const run = (args: string[], input?: string) => oapp(args, { cwd: dir, input });
const COMMANDS = [
  'keygen',
  'package',
  'inspect',
  'verify',
  'open',
  'envelope',
  'encrypt-string',
  'encrypt-bootstrap',
  'decrypt-bootstrap',
  'compile',
  'hash',
  'build',
  'test',
  'version',
  'completion',
  'man',
];

beforeAll(() => {
  mkdirSync(join(dir, 'res'));
  writeFileSync(join(dir, 'res', 'greet.js'), "context.setBody('hi')");
  const wf = {
    workflows: [
      {
        name: 'r',
        comment: 'removed by compile',
        steps: [{ stepId: 's', resultsProcessor: { resource: 'greet.js' } }],
      },
    ],
  };
  writeFileSync(join(dir, 'res-workflow.json'), JSON.stringify(wf));
  writeFileSync(join(dir, 'hello.json'), JSON.stringify(HELLO_WORKFLOW));
});

describe('conventions', () => {
  it('--help on every subcommand: exit 0, usage and an example on stdout', async () => {
    // Independent runs: side by side, checked in order.
    const runs = await Promise.all(COMMANDS.map((c) => run([c, '--help'])));
    for (const [n, c] of COMMANDS.entries()) {
      const r = runs[n]!;
      expect(r.code, c).toBe(0);
      expect(r.out).toContain(`Usage: oapp ${c}`);
      expect(r.out).toContain('Example');
      expect(r.stderr).toBe('');
    }
  });

  it('--version prints the version, exit 0', async () => {
    const r = await run(['--version']);
    expect(r.code).toBe(0);
    const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    expect(r.out).toBe(`oapp ${version} (package format oapp/v2; reads oapp/v1)\n`);
  });

  it('no command, an unknown command or option, a missing operand: exit 2, one CLI_USAGE line', async () => {
    const cases = [['frobnicate'], ['hash', 'hello.json', '--bogus'], ['hash'], ['hash', 'a', 'b']];
    const [none, ...runs] = await Promise.all([run([]), ...cases.map((args) => run(args))]);
    expect(none.code).toBe(2);
    for (const [n, args] of cases.entries()) {
      const r = runs[n]!;
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(/^oapp: CLI_USAGE: [^\n]*\n$/);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    }
  });

  it('an unreadable input file is a usage error (exit 2, CLI_FILE_UNREADABLE)', async () => {
    const r = await run(['hash', 'missing.json']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('oapp: CLI_FILE_UNREADABLE: missing.json: no such file\n');
  });
});

describe('compile, hash, build', () => {
  it('hash prints the workflow-hash/v1 of the compiled workflow; reads stdin with -', async () => {
    const { workflow } = await compileWorkflow(JSON.stringify(HELLO_WORKFLOW));
    expect((await run(['hash', 'hello.json'])).out).toBe(`${hashWorkflow(workflow)}\n`);
    expect((await run(['hash', '-'], JSON.stringify(HELLO_WORKFLOW))).out).toBe(
      `${hashWorkflow(workflow)}\n`,
    );
  });

  it('compile inlines resources from the workflow directory (or --resource-dir) and strips comments', async () => {
    const r = await run(['compile', 'res-workflow.json', '--resource-dir', 'res']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toEqual({
      workflows: [
        {
          name: 'r',
          steps: [
            { stepId: 's', resultsProcessor: { script: "context.setBody('hi')", resourceName: '/greet.js' } },
          ],
        },
      ],
    });
    const missing = await run(['compile', 'res-workflow.json']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^oapp: WORKFLOW_RESOURCE_NOT_FOUND: /);
  });

  it('compile -o FILE writes the file; --json is the /workflow-compile shape', async () => {
    expect((await run(['compile', 'hello.json', '-o', 'compiled.json'])).code).toBe(0);
    expect(JSON.parse(readFileSync(join(dir, 'compiled.json'), 'utf8'))).toEqual(HELLO_WORKFLOW);
    const j = (await run(['compile', 'hello.json', '--json'])).json();
    expect(j).toEqual({ ok: true, workflow: HELLO_WORKFLOW, resources: [] });
  });

  it('an invalid workflow is a validation failure: exit 1 with the WORKFLOW_ code', async () => {
    const r = await run(['hash', '-'], '{"workflows": [{"name": 1}]}');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^oapp: WORKFLOW_SCHEMA_INVALID: [^\n]*\n$/);
    const j = await run(['hash', '-', '--json'], '{"workflows": ');
    expect(j.json()).toEqual({
      ok: false,
      errors: [{ code: 'WORKFLOW_JSON_INVALID', message: expect.any(String) }],
    });
  });

  it('build applies the manifest customisations to files in the manifest directory', async () => {
    const manifest = {
      includes: [
        {
          sourceWorkflow: 'hello.json',
          customizations: [{ op: 'value', sourcePath: '$.workflows[0].name', sourceValue: 'renamed' }],
        },
      ],
    };
    const r = await run(['build', '-'], JSON.stringify(manifest));
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out).workflows[0].name).toBe('renamed');
    expect((await run(['build', '-', '--json'], JSON.stringify(manifest))).json().ok).toBe(true);
  });
});
