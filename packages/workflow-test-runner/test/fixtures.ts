import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseRunnerConfig, type RunnerConfig } from '../src/index.js';

/** A minimal valid workflow with one step (`stepId`) whose resultsProcessor runs `script` or a resource. */
export function workflow(
  stepId = 'probe',
  processor: Record<string, unknown> = { script: 'context.setBody("ok");' },
) {
  return { workflows: [{ name: 'probe-flow', steps: [{ stepId, resultsProcessor: processor }] }] };
}

export const json = (v: unknown): string => JSON.stringify(v, null, 2);

/** A scratch project tree; `files` maps relative paths to contents (objects are written as JSON). */
export function project(files: Record<string, unknown> = {}): { root: string; cleanup: () => void } {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'wtr-')));
  write(root, files);
  return { root, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

export function write(root: string, files: Record<string, unknown>): void {
  for (const [rel, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, rel)), { recursive: true });
    const data = typeof content === 'string' || content instanceof Uint8Array ? content : json(content);
    writeFileSync(join(root, rel), data);
  }
}

/** A parsed config for a project root (defaults: resources/ and tests/). */
export function config(root: string, extra: Record<string, unknown> = {}): RunnerConfig {
  return parseRunnerConfig(json({ resourceDirs: ['resources'], testDirs: ['tests'], ...extra }), {
    projectRoot: root,
  });
}
