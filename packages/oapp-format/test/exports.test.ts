import { describe, expect, it } from 'vitest';

describe('public surface', () => {
  it('exports exactly these names', async () => {
    expect(Object.keys(await import('../src/index.js')).sort()).toMatchInlineSnapshot(`
      [
        "DEFAULT_CHUNK_BYTES",
        "DEFAULT_MAX_PLAINTEXT_BYTES",
        "MAGIC",
        "MAX_BOOTSTRAP_BYTES",
        "MAX_CHUNK_BYTES",
        "MAX_HEADER_BYTES",
        "MAX_PACKAGE_ID_BYTES",
        "MAX_RECIPIENTS",
        "MAX_SIGNATURES",
        "MAX_SIGN_TEXT_BYTES",
        "MAX_STATEMENT_BYTES",
        "MEDIA_TYPE_BOOTSTRAP",
        "MEDIA_TYPE_WORKFLOW",
        "MIN_CHUNK_BYTES",
        "OAPP_ERROR_CODES",
        "OappError",
        "createPackage",
        "createPackageStream",
        "decryptBootstrap",
        "displayJson",
        "displayText",
        "encryptBootstrap",
        "fingerprint",
        "inspectPackage",
        "isEncryptedBootstrapText",
        "isOappError",
        "openPackage",
        "openPackageStream",
        "openPackageToSink",
        "parseStrictJson",
        "policyFromBootstrap",
        "repackage",
        "trustedKey",
        "validatePolicy",
        "verifyPackage",
        "writePackage",
      ]
    `);
  });

  // @org/oapp-format/internal: unstable, for this repository's tests, benchmarks and generators (README).
  it('keeps the building blocks in ./internal, apart from the main entry', async () => {
    const main = Object.keys(await import('../src/index.js'));
    const internal = Object.keys(await import('../src/internal.js')).sort();
    expect(internal.filter((k) => main.includes(k))).toEqual([]);
    expect(internal).toMatchInlineSnapshot(`
      [
        "BOOTSTRAP_PACKAGE_ID",
        "CHUNK_TAG_BYTES",
        "FORMAT_VERSION",
        "HEADER_FORMAT",
        "KIND_MEDIA_TYPES",
        "MAX_ENVELOPE_DEPTH",
        "PAYLOAD_AEAD",
        "SECTION",
        "SIGNING_TYPES",
        "STANZA_BYTES",
        "STATEMENT_FORMAT",
        "checkSignatures",
        "chunkNonce",
        "decodeHeader",
        "decodeSignatures",
        "decodeStatement",
        "derivePayloadKey",
        "encodeHeader",
        "encodeSignatures",
        "encodeStatement",
        "keyHint",
        "payloadLength",
        "signStatement",
        "signingMessage",
        "verifyRecord",
      ]
    `);
  });
});
