// The engine loads lmdb only when a store is opened (README "Persistence"): a deployment without persistence does
// not pay for its native library and buffers (≈ 10 MiB resident, issue 14).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

const DIST = pathToFileURL(join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'index.js')).href;

describe('lmdb is loaded on first use', () => {
  it('not by loading the engine or running steps without persistence; by the first store opened', () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'lazy-lmdb-'));
    try {
      const code = `
        import { createLmdbPersistence, createWorkflowEngine } from ${JSON.stringify(DIST)};
        const loaded = () => process.report.getReport().sharedObjects.some((f) => /lmdb/i.test(f));
        const host = { callOutbound: () => { throw new Error('no'); }, getRestrictedData: async () => undefined,
          registerSecret() {}, log() {}, metric() {}, now: Date.now,
          persistence: createLmdbPersistence({ dataDir: ${JSON.stringify(dataDir)} }) };
        const step = (stepId, extra) => ({ stepId, resultsProcessor: { script: 'context.setBody("ran")' }, ...extra });
        const plain = await createWorkflowEngine({ workflows: [{ name: 'w', steps: [step('a')] }] }, { host, data: {} });
        const input = { body: undefined, stream: undefined, headers: {}, properties: {} };
        const before = [loaded(), (await plain.runStep('a', input)).body, loaded()];
        const kept = await createWorkflowEngine(
          { workflows: [{ name: 'w', steps: [step('p', { persistenceFile: 'p.store' })] }] }, { host, data: {} });
        const after = [(await kept.runStep('p', input)).body, loaded()];
        plain.dispose(); kept.dispose(); await host.persistence.close();
        console.log(JSON.stringify([...before, ...after]));`;
      const r = spawnSync(process.execPath, ['--input-type=module', '-e', code], { encoding: 'utf8' });
      expect(r.stderr).toBe('');
      expect(JSON.parse(r.stdout)).toEqual([false, 'ran', false, 'ran', true]);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
