// S159: a workflow given to the hosted packager whose `resource` (or, for /build-workflows, `sourceWorkflow`) leaves
// the granted resource directory is refused as the Express service refuses it: `..`, an absolute path, a link out
// (a file and a directory), a name ending in `.` or a space (files with those names exist, so the refusal is the
// name's, not "not found"). Nothing of the file outside reaches an answer or the agent's log.
import { describe, expect, it } from 'vitest';
import {
  answers,
  codeOf,
  form,
  json,
  multipart,
  OUTSIDE_MARKER,
  sampleWorkflow,
  type Req,
} from './harness.js';
import { f } from './front-ends.js';
import { packageKeys, packageRequest } from './fixtures.js';

const k = packageKeys();

/** [what, resource path (a function: the outside directory is known once the front-ends are up), code] */
const RESOURCES: [string, () => string, string][] = [
  ['a .. segment', () => '/../outside/secret.js', 'WORKFLOW_RESOURCE_PATH_INVALID'],
  ['a leading .. segment', () => '../outside/secret.js', 'WORKFLOW_RESOURCE_PATH_INVALID'],
  ['.. after a directory', () => '/general/../../outside/secret.js', 'WORKFLOW_RESOURCE_PATH_INVALID'],
  ['a // (UNC) path', () => '//etc/passwd', 'WORKFLOW_RESOURCE_PATH_INVALID'],
  ['a drive letter', () => 'C:/Windows/win.ini', 'WORKFLOW_RESOURCE_PATH_INVALID'],
  // A leading slash means the resource directory's root: the absolute path of the file is looked up inside it.
  ['the absolute path of the file outside', () => `${f.outside}/secret.js`, 'WORKFLOW_RESOURCE_NOT_FOUND'],
  ['a file linked out', () => '/general/link-out.js', 'WORKFLOW_RESOURCE_OUTSIDE_ROOT'],
  ['a directory linked out', () => '/linked-dir/secret.js', 'WORKFLOW_RESOURCE_OUTSIDE_ROOT'],
  ['a name ending in "."', () => '/general/dot.js.', 'WORKFLOW_RESOURCE_PATH_INVALID'],
  ['a name ending in a space', () => '/general/space.js ', 'WORKFLOW_RESOURCE_PATH_INVALID'],
];

const uses = (resource: string) => JSON.stringify(sampleWorkflow('hello', resource));

/** The operations that read resources, each with the workflow `wf`. */
const OPERATIONS: [string, (wf: string) => Req][] = [
  ['/workflow-package', (wf) => multipart('/workflow-package', () => form(packageRequest(k), wf))],
  ['/workflow-compile', (wf) => json('/workflow-compile', wf)],
  ['/workflow-hash', (wf) => json('/workflow-hash', wf)],
];

/** Both answers refuse with `code`, byte for byte alike, and nothing from outside is in them or the agent's log. */
async function sameRefusal(id: string, make: () => Req, code: string) {
  const { express, agent } = await answers(f, id, make);
  expect({ status: express.status, code: codeOf(express) }).toEqual({ status: 422, code });
  expect(agent).toEqual(express);
  expect(agent.body).not.toContain(OUTSIDE_MARKER);
  expect(f.agentLines.join('\n')).not.toContain(OUTSIDE_MARKER);
}

describe('S159 a resource outside the granted resource directory: the same refusal as the Express service', () => {
  for (const [operation, request] of OPERATIONS) {
    it.each(RESOURCES)(`S159 ${operation}: %s`, async (what, resource, code) => {
      await sameRefusal(
        `s159${operation}-${what}`.replace(/[^a-z0-9-]/gi, '-'),
        () => request(uses(resource())),
        code,
      );
    });
  }

  it.each([
    ['a .. segment', () => '../outside/source.workflow.json', 'WORKFLOW_RESOURCE_PATH_INVALID'],
    ['an absolute path', () => `${f.outside}/source.workflow.json`, 'WORKFLOW_RESOURCE_NOT_FOUND'],
    ['a file linked out', () => 'link-out.workflow.json', 'WORKFLOW_RESOURCE_OUTSIDE_ROOT'],
    ['a directory linked out', () => 'linked-dir/source.workflow.json', 'WORKFLOW_RESOURCE_OUTSIDE_ROOT'],
  ])('S159 /build-workflows: a sourceWorkflow by %s', async (what, source, code) => {
    const manifest = JSON.stringify({ includes: [{ sourceWorkflow: source() }] });
    await sameRefusal(
      `s159-build-${what}`.replace(/[^a-z0-9-]/gi, '-'),
      () => json('/build-workflows', manifest),
      code,
    );
  });

  it('S159 the same workflow with a resource inside the directory is packaged (the grant itself works)', async () => {
    const { express, agent } = await answers(f, 's159-inside', () =>
      json('/workflow-hash', uses('/general/hello.js')),
    );
    expect(express.status).toBe(200);
    expect(agent).toEqual(express);
  });
});
