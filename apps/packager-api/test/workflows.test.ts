import { canonicalize, compileWorkflow, hashWorkflow } from '@org/workflow-compiler';
import { describe, expect, it } from 'vitest';
import { problem, sampleWorkflow, useServer, type Body } from './helpers.js';

const srv = useServer({ workflowBytes: 64 * 1024 });
const json = (url: string, body: string, headers: Record<string, string> = {}) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });

async function expectProblem(res: Response, status: number, code: string) {
  const body = await problem(res);
  expect({ status: res.status, code: body.code }).toEqual({ status, code });
  return body;
}

describe('POST /workflow-compile', () => {
  it('compiles a JSON body: comments stripped, resource inlined', async () => {
    const res = await json(`${srv.url}/workflow-compile`, JSON.stringify(sampleWorkflow()));
    expect(res.status).toBe(200);
    const body = (await res.json()) as Body;
    expect(body.ok).toBe(true);
    expect(body.workflow.comment).toBeUndefined();
    expect(body.workflow.workflows[0].steps[0].resultsProcessor.resourceName).toBe('/general/hello.js');
    expect(body.resources).toEqual([{ path: '/general/hello.js', bytes: 26, references: 1 }]);
  });

  it('compiles a multipart stream part', async () => {
    const fd = new FormData();
    fd.append('stream', new Blob([JSON.stringify(sampleWorkflow())]), 'w.json');
    const res = await fetch(`${srv.url}/workflow-compile`, { method: 'POST', body: fd });
    expect(res.status).toBe(200);
  });

  it('rejects invalid JSON with WORKFLOW_JSON_INVALID', async () => {
    await expectProblem(
      await json(`${srv.url}/workflow-compile`, '{"workflows":'),
      400,
      'WORKFLOW_JSON_INVALID',
    );
  });

  it('rejects a schema violation with WORKFLOW_SCHEMA_INVALID', async () => {
    const body = await expectProblem(
      await json(`${srv.url}/workflow-compile`, '{"workflow":[]}'),
      422,
      'WORKFLOW_SCHEMA_INVALID',
    );
    expect(body.errors.length).toBeGreaterThan(0);
  });

  it('rejects a resource path escaping the directory', async () => {
    const wf = JSON.stringify(sampleWorkflow()).replace('/general/hello.js', '/../../etc/passwd');
    const res = await json(`${srv.url}/workflow-compile`, wf);
    expect(res.status).toBe(422);
    expect((await problem(res)).code).toMatch(/^WORKFLOW_RESOURCE_(PATH_INVALID|OUTSIDE_ROOT)$/);
  });

  it('rejects text/plain with REQUEST_UNSUPPORTED_MEDIA_TYPE', async () => {
    const res = await fetch(`${srv.url}/workflow-compile`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: '{}',
    });
    await expectProblem(res, 415, 'REQUEST_UNSUPPORTED_MEDIA_TYPE');
  });

  it('rejects a JSON body over the cap with UPLOAD_BODY_TOO_LARGE; the next request succeeds', async () => {
    const big = JSON.stringify({ ...sampleWorkflow(), comment: 'x'.repeat(64 * 1024) });
    await expectProblem(await json(`${srv.url}/workflow-compile`, big), 413, 'UPLOAD_BODY_TOO_LARGE');
    expect((await json(`${srv.url}/workflow-compile`, JSON.stringify(sampleWorkflow()))).status).toBe(200);
  });

  it('rejects Accept: text/html with REQUEST_NOT_ACCEPTABLE', async () => {
    const res = await json(`${srv.url}/workflow-compile`, JSON.stringify(sampleWorkflow()), {
      accept: 'text/html',
    });
    await expectProblem(res, 406, 'REQUEST_NOT_ACCEPTABLE');
  });
});

describe('POST /workflow-hash', () => {
  it('returns {ok, hash, algorithm} equal to the library hash of the compiled workflow', async () => {
    const res = await json(`${srv.url}/workflow-hash`, JSON.stringify(sampleWorkflow()));
    expect(res.status).toBe(200);
    const body = (await res.json()) as Body;
    const { workflow } = await compileWorkflow(JSON.stringify(sampleWorkflow()), {
      resourceDirs: [srv.resourceDir],
    });
    expect(body).toEqual({ ok: true, hash: hashWorkflow(workflow), algorithm: 'sha-256' });
    expect(canonicalize(workflow).length).toBeGreaterThan(0);
  });

  it('rejects duplicate keys with WORKFLOW_JSON_DUPLICATE_KEY', async () => {
    await expectProblem(
      await json(`${srv.url}/workflow-hash`, '{"workflows":[],"workflows":[]}'),
      400,
      'WORKFLOW_JSON_DUPLICATE_KEY',
    );
  });

  it('rejects a body part in a form with REQUEST_FIELD_INVALID', async () => {
    const fd = new FormData();
    fd.append('body', '{}');
    fd.append('stream', new Blob([JSON.stringify(sampleWorkflow())]), 'w.json');
    await expectProblem(
      await fetch(`${srv.url}/workflow-hash`, { method: 'POST', body: fd }),
      422,
      'REQUEST_FIELD_INVALID',
    );
  });
});

describe('POST /build-workflows', () => {
  it('builds from a manifest and returns {ok, workflow}', async () => {
    const manifest = {
      includes: [
        {
          sourceWorkflow: 'health.workflow.json',
          customizations: [{ op: 'value', sourcePath: '$.workflows[0].name', sourceValue: 'renamed' }],
        },
      ],
    };
    const res = await json(`${srv.url}/build-workflows`, JSON.stringify(manifest));
    expect(res.status).toBe(200);
    const body = (await res.json()) as Body;
    expect(body.ok).toBe(true);
    expect(body.workflow.workflows[0].name).toBe('renamed');
  });

  it('rejects a path that does not exist with WORKFLOW_MANIFEST_PATH_NOT_FOUND', async () => {
    const manifest = {
      includes: [
        {
          sourceWorkflow: 'health.workflow.json',
          customizations: [{ op: 'delete', sourcePath: '$.workflows[7]' }],
        },
      ],
    };
    await expectProblem(
      await json(`${srv.url}/build-workflows`, JSON.stringify(manifest)),
      422,
      'WORKFLOW_MANIFEST_PATH_NOT_FOUND',
    );
  });

  it('rejects a manifest with a wrong field name with WORKFLOW_MANIFEST_INVALID', async () => {
    await expectProblem(
      await json(`${srv.url}/build-workflows`, '{"include":[]}'),
      422,
      'WORKFLOW_MANIFEST_INVALID',
    );
  });
});
