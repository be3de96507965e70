import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { OPENAPI_DOCUMENT } from '../src/openapi.js';
import { useServer, type Body } from './helpers.js';

// Issue 27: the OpenAPI document said version 0.1.0 while the service was 1.0.0-rc.x. (The drain part of the
// issue is tested in listen-drain.test.ts.)

const srv = useServer();
const PACKAGE_VERSION = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

describe('fix-27: the OpenAPI document', () => {
  it("serves info.version from the service's package.json (the version --version prints)", async () => {
    const body = (await (await fetch(`${srv.url}/openapi.json`)).json()) as Body;
    expect(body.info.version).toBe(PACKAGE_VERSION);
    expect(OPENAPI_DOCUMENT.info.version).toBe(PACKAGE_VERSION);
    expect(PACKAGE_VERSION).toMatch(/^\d+\.\d+\.\d+/);
  });
});
