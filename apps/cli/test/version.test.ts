import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { oapp } from './helpers.js';

const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

describe('VERSION_TEXT', () => {
  // age and minisign users type -v or --version, cosign users `version`: all print what --version prints.
  it.each([['-v'], ['-V'], ['version'], ['--version']])('oapp %s prints the version, exit 0', async (arg) => {
    const r = await oapp([arg]);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.out).toBe(`oapp ${version} (package format oapp/v2; reads oapp/v1)\n`);
  });
});
