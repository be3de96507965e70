// Issue 28, docs/interfaces.md §6.1 (revised): the reference's HTTP request envelope as a deployment switch,
// `referenceBehaviour.httpRequestEnvelope`; off by default (the body itself, the request line in http.* properties).
import { afterEach, describe, expect, it } from 'vitest';
import { closeRuntimes, startRuntime, step, wf } from './helpers.js';

afterEach(closeRuntimes);

const echo = (record: Record<string, unknown> = {}) => ({
  id: 'api',
  workflow: wf(
    step(
      'echo',
      "context.setBody(JSON.stringify({ body: context.getBody(), uri: context.getProperty('http.uri'), streamed: context.getStream().readAll().length }));",
      { http: { server: 'web', method: 'POST', path: '/v1/.*', multiPartUploadByteLimit: 1024 } },
    ),
  ),
  record: { allowHttpServerAccess: [{ id: 'web', port: 18091 }], ...record },
});

async function post(port: number, target: string, init: RequestInit): Promise<Record<string, unknown>> {
  const res = await fetch(`http://127.0.0.1:${port}${target}`, { method: 'POST', ...init });
  expect(res.status).toBe(200);
  return (await res.json()) as Record<string, unknown>;
}

describe('referenceBehaviour.httpRequestEnvelope (issue 28)', () => {
  // One runtime and three requests; the first run starts a sandbox worker (≈ 0.3–0.6 s).
  it(
    'hands the step {uri, method, path, query, body} as its body, in that order, and says so at start-up',
    { timeout: 15_000 },
    async () => {
      const t = await startRuntime([echo({ referenceBehaviour: { httpRequestEnvelope: true } })]);
      const port = t.port('api', 'web');
      const json = await post(port, '/v1/x%20y?a=1&b=%C3%A9', {
        headers: { 'content-type': 'application/json' },
        body: '{"n":1}',
      });
      expect(json['body']).toBe(
        '{"uri":"/v1/x%20y?a=1&b=%C3%A9","method":"POST","path":"/v1/x%20y","query":"a=1&b=%C3%A9","body":"{\\"n\\":1}"}',
      );
      // The reference's standard resources unwrap `.body` and split `.query`; no query: no key; no body: "".
      const bare = await post(port, '/v1/z', {});
      expect(JSON.parse(String(bare['body']))).toEqual({
        uri: '/v1/z',
        method: 'POST',
        path: '/v1/z',
        body: '',
      });
      // Multipart: `body` is the body part, the file stays in getStream().
      const form = new FormData();
      form.append('body', '{"ref":7}');
      form.append('stream', new Blob([new Uint8Array(5)]), 'f.bin');
      const multi = await post(port, '/v1/m', { body: form });
      expect(JSON.parse(String(multi['body']))).toMatchObject({ path: '/v1/m', body: '{"ref":7}' });
      expect(multi['streamed']).toBe(5);
      expect(t.lines().find((l) => l['msg'] === 'deployment loaded')).toMatchObject({
        deploymentId: 'api',
        referenceBehaviour: 'httpRequestEnvelope',
      });
    },
  );

  it('is off by default and with "false": the body itself, the request line in http.* properties', async () => {
    for (const record of [{}, { referenceBehaviour: { httpRequestEnvelope: 'false' } }]) {
      const t = await startRuntime([echo(record)]);
      const json = await post(t.port('api', 'web'), '/v1/x?a=1', {
        headers: { 'content-type': 'application/json' },
        body: '{"n":1}',
      });
      expect(json).toMatchObject({ body: '{"n":1}', uri: '/v1/x?a=1' });
      expect(t.lines().find((l) => l['msg'] === 'deployment loaded')).not.toHaveProperty(
        'referenceBehaviour',
      );
      await closeRuntimes();
    }
  });
});
