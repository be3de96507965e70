import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const TESTDATA = fileURLToPath(new URL('../testdata/', import.meta.url));
export const RESOURCE_DIRS = [join(TESTDATA, 'resources1'), join(TESTDATA, 'resources2')];
export const WORKFLOW_DIRS = [join(TESTDATA, 'workflows')];

/** A minimal valid workflow file with one step whose resultsProcessor is `processor`. */
export function oneStep(processor: unknown, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { workflows: [{ name: 'w', steps: [{ stepId: 's', resultsProcessor: processor, ...extra }] }] };
}

/** A scratch directory tree; `files` maps relative paths to contents. Call `cleanup()` in afterEach/afterAll. */
export function scratch(files: Record<string, string | Uint8Array> = {}): {
  root: string;
  cleanup: () => void;
} {
  const root = mkdtempSync(join(tmpdir(), 'workflow-compiler-'));
  for (const [rel, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, rel)), { recursive: true });
    writeFileSync(join(root, rel), content);
  }
  return { root, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

/** fast-check run count: small by default, large under SLOW=1. */
export const RUNS = process.env['SLOW'] ? 2000 : 50;
