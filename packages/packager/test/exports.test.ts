import { describe, expect, it } from 'vitest';
import * as api from '../src/index.js';

describe('public surface', () => {
  it('exports exactly these names', () => {
    expect(Object.keys(api).sort()).toMatchInlineSnapshot(`
      [
        "BOOTSTRAP_ENCRYPT_REQUEST_SCHEMA",
        "BUFFERED_BODY_BYTES",
        "DEFAULT_LIMITS",
        "INSPECT_QUERY_PARAMETERS",
        "JSON_TYPE",
        "KEY_GEN_ALIASES",
        "KEY_GEN_PURPOSES",
        "KEY_SCHEMA",
        "MAX_BODY_DEPTH",
        "OCTET_STREAM",
        "OPERATION_SCOPES",
        "PACKAGER_OPERATIONS",
        "PACKAGE_ENVELOPE_REQUEST_SCHEMA",
        "PACKAGE_REQUEST_SCHEMA",
        "PACKAGING_SCHEMA",
        "RELEASE_PROPERTIES",
        "REQUEST_ERROR_CODES",
        "RequestError",
        "SIGNER_SCHEMA",
        "STATUS_BY_CODE",
        "STRING_ENCRYPT_REQUEST_SCHEMA",
        "TEXT_PLAIN",
        "TOKEN_PREFIX",
        "TOKEN_SCOPES",
        "bodyValidator",
        "bootstrapEncrypt",
        "buildWorkflowsFromManifest",
        "checkBootstrapEncryptRequest",
        "checkPackageRequest",
        "createPackagerCapability",
        "createPackagerOperations",
        "createTokenCheck",
        "exactlyOneRecipient",
        "health",
        "inspectFreshnessOf",
        "internalProblemBody",
        "isCodedError",
        "isPackagerOperation",
        "isRequestError",
        "keyGen",
        "keyGenPurpose",
        "negotiate",
        "newCallerToken",
        "packageEnvelope",
        "parseBody",
        "parseKeyring",
        "parseTokenHashes",
        "problemBody",
        "readAll",
        "readForm",
        "readJsonDocument",
        "readOctets",
        "resolveLimits",
        "resolvePackager",
        "resolveRecipients",
        "resolveSigners",
        "stringEncrypt",
        "tokenHash",
        "uploadOptionsByPath",
        "uploadOptionsFor",
        "validateBootstrapEncryptRequest",
        "validatePackageEnvelopeRequest",
        "validatePackageRequest",
        "validateStringEncryptRequest",
        "workflowCompile",
        "workflowHash",
        "workflowInspect",
        "workflowPackage",
      ]
    `);
  });

  it('lists every request code once, each with the REQUEST_ prefix and a status', () => {
    expect(new Set(api.REQUEST_ERROR_CODES).size).toBe(api.REQUEST_ERROR_CODES.length);
    for (const code of api.REQUEST_ERROR_CODES) {
      expect(code).toMatch(/^REQUEST_[A-Z0-9_]+$/);
      expect(api.STATUS_BY_CODE[code]).toBeGreaterThanOrEqual(400);
    }
  });

  it('recognises a RequestError by shape (another loaded copy included), not by class', () => {
    const err = new api.RequestError('REQUEST_FIELD_INVALID', 'body field /x is required');
    expect(api.isRequestError(err)).toBe(true);
    expect(api.isRequestError({ name: 'RequestError', code: 'REQUEST_FIELD_INVALID', message: 'm' })).toBe(
      true,
    );
    expect(api.isRequestError({ name: 'RequestError', code: 'NOT_A_CODE', message: 'm' })).toBe(false);
    expect(api.isCodedError({ name: 'UploadError', code: 'UPLOAD_MALFORMED', message: 'm' })).toBe(true);
    expect(api.isCodedError(new Error('plain'))).toBe(false);
  });

  it('builds the problem of a coded error for a request id, as both front-ends send it', () => {
    const err = new api.RequestError(
      'REQUEST_UNKNOWN_KEY_ID',
      'encryptionKeys[0]: no key with id "x" in keys',
      {
        errors: [{ pointer: '/encryptionKeys/0', detail: 'unknown key id "x"' }],
      },
    );
    expect(api.problemBody(err, '0b0e2b4c-3f3a-4c49-9a53-3d7b0f6a2b11')).toEqual({
      type: 'urn:example:oapp:problem:request-unknown-key-id',
      title: 'Unknown key id',
      status: 422,
      detail: 'encryptionKeys[0]: no key with id "x" in keys',
      instance: 'urn:uuid:0b0e2b4c-3f3a-4c49-9a53-3d7b0f6a2b11',
      code: 'REQUEST_UNKNOWN_KEY_ID',
      errors: [{ pointer: '/encryptionKeys/0', detail: 'unknown key id "x"' }],
    });
  });

  it('reads key-gen purposes as querystring.parse does', () => {
    expect(api.keyGenPurpose('purpose=sign')).toBe('sign');
    expect(api.keyGenPurpose('purpose=box')).toBe('authenticated');
    expect(api.keyGenPurpose('a=1&purpose=secret%62ox')).toBe('symmetric');
    expect(() => api.keyGenPurpose(null)).toThrowCode(api.RequestError, 'REQUEST_MISSING_PURPOSE');
    expect(() => api.keyGenPurpose('purpose=')).toThrowCode(api.RequestError, 'REQUEST_MISSING_PURPOSE');
    expect(() => api.keyGenPurpose('purpose=sign&purpose=box')).toThrowCode(
      api.RequestError,
      'REQUEST_INVALID_PURPOSE',
    );
    expect(() => api.keyGenPurpose('purpose=__proto__')).toThrowCode(
      api.RequestError,
      'REQUEST_INVALID_PURPOSE',
    );
  });

  it('puts limits on the defaults, refusing what is not a whole number of bytes', () => {
    expect(api.resolveLimits({ stringBytes: 0 })).toEqual({ ...api.DEFAULT_LIMITS, stringBytes: 0 });
    expect(Object.isFrozen(api.DEFAULT_LIMITS)).toBe(true);
    expect(() => api.resolveLimits({ packageBytes: Number.NaN })).toThrow(RangeError);
  });
});
