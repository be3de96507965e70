import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { OPERATION_SCOPES, isPackagerOperation } from '@org/packager';
import { OPENAPI_DOCUMENT } from '../src/openapi.js';

// `redocly lint` with its built-in recommended rules, run from this app's node_modules: no network (telemetry
// and update checks off), so CI checks the document offline.
const REDOCLY = join(dirname(fileURLToPath(import.meta.url)), '..', 'node_modules', '.bin', 'redocly');

describe('OPENAPI_DOCUMENT', () => {
  it('passes redocly lint (recommended rules) with no error and no warning', { timeout: 60_000 }, () => {
    expect(existsSync(REDOCLY), `${REDOCLY} is missing: run pnpm install`).toBe(true);
    const dir = mkdtempSync(join(tmpdir(), 'packager-openapi-'));
    try {
      const file = join(dir, 'openapi.json');
      writeFileSync(file, JSON.stringify(OPENAPI_DOCUMENT, null, 2));
      const run = spawnSync(REDOCLY, ['lint', file, '--format=stylish', '--extends=recommended'], {
        cwd: dir,
        encoding: 'utf8',
        env: {
          PATH: process.env['PATH'] ?? '',
          HOME: dir,
          REDOCLY_TELEMETRY: 'off',
          REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true',
        },
      });
      const output = `${run.stdout}${run.stderr}`;
      expect(run.status, output).toBe(0);
      expect(output).toContain('Your API description is valid');
      // A stylish problem line is `line:col  warning|error  rule  message` (the Node-version banner is not one).
      expect(output).not.toMatch(/^\s*\d+:\d+\s+(warning|error)\s/m);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('gives every operation an operationId, its security (ADR 0140) and a 4xx answer', () => {
    for (const [path, item] of Object.entries(OPENAPI_DOCUMENT.paths)) {
      for (const [method, op] of Object.entries(item as Record<string, Record<string, unknown>>)) {
        const where = `${method} ${path}`;
        expect(typeof op['operationId'], where).toBe('string');
        // The packager's operations take the caller token with their scope and answer 401/403; the rest are open.
        const operation = path.slice(1);
        if (isPackagerOperation(operation) && operation !== 'health') {
          expect(op['security'], where).toEqual([{ callerToken: [OPERATION_SCOPES[operation]] }]);
          expect(Object.keys(op['responses'] as object), where).toEqual(
            expect.arrayContaining(['401', '403']),
          );
        } else expect(op['security'], where).toEqual([]);
        expect(
          Object.keys(op['responses'] as object).some((s) => /^4\d\d$/.test(s)),
          where,
        ).toBe(true);
      }
    }
  });

  it('links the multipart `body` part to its request schema', () => {
    const part = (path: '/workflow-package' | '/string-encrypt') =>
      OPENAPI_DOCUMENT.paths[path].post.requestBody.content['multipart/form-data'].schema.properties.body;
    expect(part('/workflow-package').$ref).toBe('#/components/schemas/PackageRequest');
    expect(part('/string-encrypt').$ref).toBe('#/components/schemas/StringEncryptRequest');
  });
});
