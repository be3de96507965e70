import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as api from '../src/index.js';

describe('public surface', () => {
  it('exports exactly these names', () => {
    expect(Object.keys(api).sort()).toMatchInlineSnapshot(`
      [
        "ACCEPTED_MEDIA_TYPES",
        "DEFAULT_BODY_FIELD_BYTE_LIMIT",
        "DEFAULT_RAW_BODY_BYTE_LIMIT",
        "MAX_PARTS",
        "MAX_PART_HEADER_BYTES",
        "MAX_PART_HEADER_LINES",
        "MULTIPART_OVERHEAD_BYTES",
        "UPLOAD_ERROR_CODES",
        "UPLOAD_STATUS_BY_CODE",
        "UploadError",
        "acceptedMediaTypes",
        "checkUploadHeaders",
        "createCheckContinueListener",
        "emptyStream",
        "isUploadError",
        "parseUploadBuffer",
        "readUpload",
        "readUploadBuffered",
      ]
    `);
  });

  it('lists every error code once, each with the UPLOAD_ prefix', () => {
    expect(new Set(api.UPLOAD_ERROR_CODES).size).toBe(api.UPLOAD_ERROR_CODES.length);
    for (const code of api.UPLOAD_ERROR_CODES) expect(code).toMatch(/^UPLOAD_[A-Z0-9_]+$/);
  });

  it('gives every error code the status of the README table', () => {
    expect(Object.keys(api.UPLOAD_STATUS_BY_CODE).sort()).toEqual([...api.UPLOAD_ERROR_CODES].sort());
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const rows = [...readme.matchAll(/^\| `(UPLOAD_[A-Z0-9_]+)` +\| (\d{3}) /gm)];
    expect(Object.fromEntries(rows.map(([, code, status]) => [code, Number(status)]))).toEqual(
      api.UPLOAD_STATUS_BY_CODE,
    );
  });
});
