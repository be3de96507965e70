import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APP, listening, oapp, PACKAGER_API_MAIN, start, stop, tempDir, type Child } from './helpers.js';

interface Step {
  stepId: string;
  data?: { packagerOperation?: string };
  trigger?: { http?: { server: string; method: string; path: string; multiPartUploadByteLimit?: number } };
  resultsProcessor?: { resource?: string };
}

const workflow = JSON.parse(readFileSync(join(APP, 'packager.workflow.json'), 'utf8')) as {
  workflows: { steps: Step[] }[];
};
const allSteps = workflow.workflows.flatMap((w) => w.steps);
/** The steps of the inspection page (GET and HEAD /inspect, ADR 0146): a script of their own, no operation. */
const PAGE_STEPS = ['inspect', 'inspect-head'];
/** The packager operations' steps. */
const steps = allSteps.filter((s) => !PAGE_STEPS.includes(s.stepId));

const MIB = 1024 * 1024;
/**
 * The Express service's default caps of each upload (apps/packager-api/src/config.ts DEFAULT_LIMITS and upload.ts):
 * the `stream` part of the forms, and the JSON-or-form endpoints' document. 65536 is envelope-crypto's
 * MAX_STRING_PLAINTEXT_BYTES. /workflow-inspect takes raw bytes, never multipart; the GET endpoints no body.
 */
const MULTIPART_LIMITS: Record<string, number | undefined> = {
  'workflow-package': 8 * MIB,
  'bootstrap-encrypt': 4 * MIB,
  'string-encrypt': 65536,
  'workflow-compile': 8 * MIB,
  'workflow-hash': 8 * MIB,
  'workflow-inspect': undefined,
  'package-envelope': 32 * MIB,
  'build-workflows': 8 * MIB,
  'key-gen': undefined,
  health: undefined,
};

/** Operations endpoints of the Express service the agent serves on its admin listener instead. */
const ADMIN_PATHS = ['/ready', '/metrics', '/openapi.json'];

describe('packager.workflow.json', () => {
  let express: Child | undefined;
  let base = '';

  beforeAll(async () => {
    express = start(PACKAGER_API_MAIN, [], { PORT: '0', PACKAGER_RESOURCE_DIRS: tempDir() });
    base = `http://127.0.0.1:${(await listening(express))['port'] as number}`;
  }, 30_000); // the Express service starts in 1-3 s on this shared 2-core machine

  afterAll(async () => {
    await stop(express);
  });

  it('has one step per endpoint of the Express service, with its path and method, on the server "api"', async () => {
    const doc = (await (await fetch(`${base}/openapi.json`)).json()) as { paths: Record<string, object> };
    const endpoints = Object.entries(doc.paths)
      .filter(([path]) => !ADMIN_PATHS.includes(path))
      .flatMap(([path, methods]) => Object.keys(methods).map((m) => `${m.toUpperCase()} ${path}`))
      .sort();
    // HEAD /inspect is the GET's HEAD, which the Express service answers without a route of its own.
    const triggers = allSteps
      .filter((s) => s.stepId !== 'inspect-head')
      .map((s) => `${s.trigger?.http?.method} ${s.trigger?.http?.path}`)
      .sort();
    expect(triggers).toEqual(endpoints);
    expect(new Set(allSteps.map((s) => s.trigger?.http?.server))).toEqual(new Set(['api']));
  });

  it('names its operation in data.packagerOperation: the step id, the path without its slash', () => {
    expect(steps.map((s) => s.stepId).sort()).toEqual(Object.keys(MULTIPART_LIMITS).sort());
    for (const s of steps) {
      expect(s.data, s.stepId).toEqual({ packagerOperation: s.stepId });
      expect(s.trigger?.http?.path).toBe(`/${s.stepId}`);
    }
  });

  it('sets multiPartUploadByteLimit exactly where the API takes multipart, to the Express default', () => {
    for (const s of steps) {
      expect(s.trigger?.http?.multiPartUploadByteLimit, s.stepId).toBe(MULTIPART_LIMITS[s.stepId]);
    }
  });

  it('runs one script, which is wiring only: context.packager()', () => {
    expect(new Set(steps.map((s) => JSON.stringify(s.resultsProcessor)))).toEqual(
      new Set([JSON.stringify({ resource: '/packager/serve.js' })]),
    );
    // inspect-page.js, the page steps' script, is written by the build (not in git).
    expect(
      readdirSync(join(APP, 'resources'), { recursive: true })
        .filter((f) => f !== 'packager/inspect-page.js')
        .sort(),
    ).toEqual(['packager', 'packager/serve.js']);
    for (const s of allSteps.filter((x) => PAGE_STEPS.includes(x.stepId)))
      expect(s.resultsProcessor, s.stepId).toEqual({ resource: '/packager/inspect-page.js' });
    const code = readFileSync(join(APP, 'resources', 'packager', 'serve.js'), 'utf8')
      .split('\n')
      .filter((l) => !l.startsWith('//') && l.trim() !== '');
    expect(code).toEqual(['context.packager();']);
  });

  it(
    'compiles with the oapp command line',
    async () => {
      const r = await oapp([
        'compile',
        join(APP, 'packager.workflow.json'),
        '--resource-dir',
        join(APP, 'resources'),
      ]);
      expect(r.code, r.stderr).toBe(0);
      const compiled = JSON.parse(r.stdout) as {
        workflows: { steps: (Step & { resultsProcessor: object })[] }[];
      };
      expect(compiled.workflows[0]!.steps[0]!.resultsProcessor).toMatchObject({
        resourceName: '/packager/serve.js',
        script: expect.stringContaining('context.packager();') as unknown,
      });
    },
    20_000, // one oapp run: about 0.5 s, more under load
  );
});
