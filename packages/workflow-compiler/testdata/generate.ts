// Regenerates the golden files in testdata/golden from the fixtures. Deterministic: no randomness, no clock.
// Run from packages/workflow-compiler: `pnpm exec tsx testdata/generate.ts`. Never edit golden files by hand.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildWorkflows, compileWorkflow, hashWorkflow } from '../src/index.js';

const here = fileURLToPath(new URL('.', import.meta.url));
export const RESOURCE_DIRS = [join(here, 'resources1'), join(here, 'resources2')];
export const WORKFLOW_DIRS = [join(here, 'workflows')];

/** Golden serialisation of a compiled workflow: two-space JSON, source member order, trailing newline. */
export function goldenText(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

const step = (processor: string, extra = ''): string =>
  `{"workflows":[{"name":"w","steps":[{"stepId":"s"${extra},"resultsProcessor":${processor}}]}]}`;
const res = (path: string): string => step(`{"resource":${JSON.stringify(path)}}`);
const enc = (s: string): Uint8Array => new TextEncoder().encode(s);

/** The negative corpus: one defect per file; the name states the code compileWorkflow must raise. */
export const NEGATIVE: Record<string, Uint8Array> = {
  'WORKFLOW_JSON_INVALID--trailing-comma': enc(step('{"script":"x",}')),
  'WORKFLOW_JSON_INVALID--byte-order-mark': new Uint8Array([0xef, 0xbb, 0xbf, ...enc(step('{"script":"x"}'))]),
  'WORKFLOW_JSON_INVALID--truncated': enc(step('{"script":"x"}').slice(0, 40)),
  'WORKFLOW_JSON_BAD_UTF8--c3-28-in-script': new Uint8Array([
    ...enc('{"workflows":[{"name":"w","steps":[{"stepId":"s","resultsProcessor":{"script":"'),
    0xc3,
    0x28,
    ...enc('"}}]}]}'),
  ]),
  'WORKFLOW_JSON_DUPLICATE_KEY--step-id-twice': enc(step('{"script":"x"}', ',"stepId":"t"')),
  'WORKFLOW_JSON_LONE_SURROGATE--escaped-high-surrogate': enc(step('{"script":"\\ud800"}')),
  'WORKFLOW_JSON_TOO_DEEP--data-nested-65': enc(step('{"script":"x"}', `,"data":${'{"a":'.repeat(62)}1${'}'.repeat(62)}`)),
  'WORKFLOW_JSON_BAD_NUMBER--unsafe-multipart-limit': enc(
    step('{"script":"x"}', ',"trigger":{"http":{"server":"a","path":"/","multiPartUploadByteLimit":9007199254740993}}'),
  ),
  'WORKFLOW_SCHEMA_INVALID--script-and-resource': enc(step('{"script":"x","resource":"/general/clear-headers.js"}')),
  'WORKFLOW_SCHEMA_INVALID--docs-page-trigger-type': enc(step('{"script":"x"}', ',"trigger":{"type":"http"}')),
  'WORKFLOW_SCHEMA_INVALID--multipart-limit-zero': enc(
    step('{"script":"x"}', ',"trigger":{"http":{"server":"a","path":"/","multiPartUploadByteLimit":0}}'),
  ),
  'WORKFLOW_SCHEMA_INVALID--proto-as-structure': enc(step('{"script":"x","__proto__":{"polluted":true}}')),
  'WORKFLOW_DUPLICATE_STEP_ID--same-workflow': enc(
    '{"workflows":[{"name":"a","steps":[{"stepId":"x"},{"stepId":"x"}]}]}',
  ),
  'WORKFLOW_RESOURCE_PATH_INVALID--dot-dot': enc(res('../x')),
  'WORKFLOW_RESOURCE_PATH_INVALID--backslash-dot-dot': enc(res('..\\x')),
  'WORKFLOW_RESOURCE_PATH_INVALID--drive-letter': enc(res('C:\\x')),
  'WORKFLOW_RESOURCE_PATH_INVALID--drive-relative': enc(res('C:x')),
  'WORKFLOW_RESOURCE_PATH_INVALID--unc': enc(res('\\\\host\\share\\x')),
  'WORKFLOW_RESOURCE_PATH_INVALID--nul-byte': enc(res('general/clear-headers.js\u0000.txt')),
  'WORKFLOW_RESOURCE_PATH_INVALID--nested-dot-dot': enc(res('/general/../../etc/passwd')),
  // Trailing dots and spaces alias another name on some file systems (SPEC.md §6.1).
  'WORKFLOW_RESOURCE_PATH_INVALID--trailing-dot': enc(res('/general/clear-headers.js.')),
  'WORKFLOW_RESOURCE_PATH_INVALID--trailing-space': enc(res('/general/clear-headers.js ')),
  'WORKFLOW_RESOURCE_PATH_INVALID--directory-trailing-dot': enc(res('/general./clear-headers.js')),
  'WORKFLOW_RESOURCE_NOT_FOUND--etc-passwd-is-relative': enc(res('/etc/passwd')),
  'WORKFLOW_RESOURCE_NOT_FOUND--missing-file': enc(res('/general/missing.js')),
};

async function main(): Promise<void> {
  for (const [name, bytes] of Object.entries(NEGATIVE)) writeFileSync(join(here, 'negative', `${name}.json`), bytes);
  const hashes: Record<string, string> = {};
  for (const name of readdirSync(join(here, 'workflows')).sort()) {
    const { workflow } = await compileWorkflow(readFileSync(join(here, 'workflows', name)), { resourceDirs: RESOURCE_DIRS });
    writeFileSync(join(here, 'golden', name.replace('.workflow.json', '.compiled.json')), goldenText(workflow));
    hashes[name] = hashWorkflow(workflow);
  }
  for (const name of readdirSync(join(here, 'manifests')).sort()) {
    const built = await buildWorkflows(readFileSync(join(here, 'manifests', name)), { workflowDirs: WORKFLOW_DIRS });
    const { workflow } = await compileWorkflow(built.workflow, { resourceDirs: RESOURCE_DIRS });
    writeFileSync(join(here, 'golden', name.replace('.manifest.json', '.built.json')), goldenText(workflow));
    hashes[name] = hashWorkflow(workflow);
  }
  writeFileSync(join(here, 'golden', 'hashes.json'), goldenText(hashes));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
