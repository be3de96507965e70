import { describe, expect, it } from 'vitest';
import * as api from '../src/index.js';

describe('public surface', () => {
  it('exports exactly these names', () => {
    expect(Object.keys(api).sort()).toMatchInlineSnapshot(`
      [
        "DEFAULT_TIMEOUT_MS",
        "FORBIDDEN_HEADER_NAMES",
        "HTTP_METHODS",
        "MAX_ALLOW_LIST_ENTRIES",
        "MAX_BASE_URL_CHARS",
        "MAX_HEADERS",
        "MAX_HEADER_VALUE_CHARS",
        "MAX_HOST_ID_CHARS",
        "MAX_PATH_CHARS",
        "MAX_PATTERN_CHARS",
        "MAX_PATTERN_COST",
        "MAX_REDIRECTS",
        "OPT_IN_ADDRESS_KINDS",
        "POLICY_ERROR_CODES",
        "PolicyError",
        "checkOutboundCall",
        "classifyAddress",
        "compileHostPolicy",
        "convertLegacyHosts",
        "isAddressKindAllowed",
        "isForbiddenHeader",
        "isHeaderName",
        "isHeaderValue",
        "isPolicyError",
        "isPrivateAddress",
        "normalizeMethod",
        "sendOutbound",
      ]
    `);
  });

  it('PolicyError carries the code, details and a name equal to the class name', () => {
    const e = new api.PolicyError('POLICY_HOST_UNKNOWN', 'm', { details: { hostId: 'x', rule: 'host-id' } });
    expect(e).toBeInstanceOf(Error);
    expect(e.name).toBe('PolicyError');
    expect(e.code).toBe('POLICY_HOST_UNKNOWN');
    expect(e.details).toEqual({ hostId: 'x', rule: 'host-id' });
    expect(new api.PolicyError('POLICY_TIMEOUT', 'm').details).toBeUndefined();
    expect(api.POLICY_ERROR_CODES).toContain('POLICY_PRIVATE_ADDRESS');
  });
});
