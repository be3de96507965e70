import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A small valid workflow for the packager's tests (library, Express service, agent app): its first processor uses
 * the resource `resource`, its `comment` is stripped by compile.
 */
export function sampleWorkflow(name = 'hello', resource = '/general/hello.js') {
  return {
    comment: 'stripped by compile',
    workflows: [
      {
        name,
        steps: [
          { stepId: `${name}-1`, trigger: { runOnce: true }, resultsProcessor: { resource } },
          { stepId: `${name}-2`, resultsProcessor: { script: "context.setBody('two')" } },
        ],
      },
    ],
  };
}

/**
 * Writes the packager tests' resource files into `dir` (created when missing): the script `general/hello.js` and
 * the includable workflow `health.workflow.json` ({@link sampleWorkflow} `health`). Returns `dir`.
 */
export function writeSampleResources(dir: string): string {
  mkdirSync(join(dir, 'general'), { recursive: true });
  writeFileSync(join(dir, 'general', 'hello.js'), "context.setBody('hello');\n");
  writeFileSync(join(dir, 'health.workflow.json'), JSON.stringify(sampleWorkflow('health')));
  return dir;
}

/**
 * A multipart form with a `body` text part and a `stream` file part (`stream.bin`, application/octet-stream).
 * `body` is sent as JSON text, or as it is when it is a string and `bodyIsText` is set.
 */
export function multipartForm(body: unknown, stream: string | Uint8Array, bodyIsText = false): FormData {
  const fd = new FormData();
  fd.append('body', bodyIsText && typeof body === 'string' ? body : JSON.stringify(body));
  fd.append('stream', new Blob([stream], { type: 'application/octet-stream' }), 'stream.bin');
  return fd;
}
