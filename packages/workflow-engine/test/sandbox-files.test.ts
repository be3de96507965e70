import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { EngineError, createWorkflowEngine } from '../src/index.js';
import { SANDBOX_DIST, readSandboxScripts } from '../src/sandbox-files.js';
import { fakeHost, input, scriptStep, workflow } from './fake-host.js';

describe('built sandbox files (ADR 0050)', () => {
  it('are read from <package>/dist/sandbox/', async () => {
    expect(SANDBOX_DIST.href).toBe(new URL('../dist/sandbox/', import.meta.url).href);
    const scripts = await readSandboxScripts();
    expect(scripts.prelude).toBe(await readFile(new URL('prelude.global.js', SANDBOX_DIST), 'utf8'));
  });

  it('are plain scripts: one wrapper function, no import or export', async () => {
    const { prelude, utilSource } = await readSandboxScripts();
    for (const source of [prelude, utilSource]) {
      expect(source.startsWith("(function () {\n'use strict';\n")).toBe(true);
      expect(source.trimEnd().endsWith('})();')).toBe(true);
      expect(source).not.toMatch(/^\s*(import|export)\b/m);
    }
  });

  it('a missing build fails with ENGINE_SANDBOX_FAILED', async () => {
    const nowhere = new URL('../no-such-build/', import.meta.url);
    await expect(readSandboxScripts(nowhere)).toThrowCode(EngineError, 'ENGINE_SANDBOX_FAILED');
  });

  it('leave nothing on the global object, also once the helper script is compiled', async () => {
    const script =
      "context.bytes(); context.crypto(); context.setBody(Object.getOwnPropertyNames(globalThis).filter((k) => k.startsWith('__')).join(','))";
    const engine = await createWorkflowEngine(workflow([scriptStep('s', script)]), {
      host: fakeHost(),
      data: {},
    });
    for (let i = 0; i < 2; i++) expect((await engine.runStep('s', input())).body).toBe('');
    engine.dispose();
  });
});
