import { describe, expect, it } from 'vitest';

describe('public surface', () => {
  it('exports exactly these names', async () => {
    expect(Object.keys(await import('../src/index.js')).sort()).toMatchInlineSnapshot(`
      [
        "BOOTSTRAP_SIGNATURE_FORMAT",
        "DEFAULT_CHUNK_BYTES",
        "DEFAULT_CLOCK_SKEW_SECONDS",
        "DEFAULT_FORMAT_VERSION",
        "DEFAULT_MAX_PLAINTEXT_BYTES",
        "MAGIC",
        "MAX_BOOTSTRAP_BYTES",
        "MAX_BOOTSTRAP_SIGNATURE_BYTES",
        "MAX_CHUNK_BYTES",
        "MAX_CLOCK_SKEW_SECONDS",
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
        "checkFreshness",
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
        "openEncryptedBootstrap",
        "openPackage",
        "openPackageStream",
        "openPackageToSink",
        "parseStrictJson",
        "policyFromBootstrap",
        "repackage",
        "signBootstrap",
        "trustedKey",
        "validatePolicy",
        "verifyBootstrapSignature",
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
        "FORMAT_VERSIONS",
        "HEADER_FORMAT",
        "HEADER_FORMATS",
        "KIND_MEDIA_TYPES",
        "MAX_ENVELOPE_DEPTH",
        "PAYLOAD_AEAD",
        "SECTION",
        "SIGNING_TYPES",
        "STANZA_BYTES",
        "STATEMENT_FORMAT",
        "STATEMENT_FORMATS",
        "checkSignatures",
        "chunkNonce",
        "clockSequence",
        "decodeHeader",
        "decodeSignatures",
        "decodeStatement",
        "derivePayloadKey",
        "encodeHeader",
        "encodeSignatures",
        "encodeStatement",
        "keyHint",
        "payloadLength",
        "releaseOf",
        "signStatement",
        "signingMessage",
        "verifyRecord",
      ]
    `);
  });
});
