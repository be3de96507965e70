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

async function main(): Promise<void> {
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
