/**
 * JSON Schemas of the `body` parts (and the key-gen response), shared by request validation and the OpenAPI
 * document, so the documented shapes are the enforced shapes.
 */
const keyId = { type: 'string', minLength: 1, maxLength: 256 } as const;

export const KEY_SCHEMA = {
  type: 'object',
  description:
    'A key (docs/interfaces.md §2). `keyHex` is judged by envelope-crypto: strict hex, exact length per purpose/type.',
  required: ['id', 'purpose', 'type', 'keyHex'],
  additionalProperties: false,
  properties: {
    id: keyId,
    purpose: { enum: ['sign', 'authenticated', 'anonymous', 'symmetric'] },
    type: { enum: ['public', 'secret'] },
    keyHex: { type: 'string', maxLength: 1024 },
    metadata: { type: 'object' },
  },
} as const;

const keys = { type: 'array', minItems: 1, maxItems: 4096, items: KEY_SCHEMA } as const;
const recipients = {
  type: 'array',
  description: 'Ids of `authenticated` public keys in `keys`.',
  minItems: 1,
  maxItems: 1024,
  items: keyId,
} as const;
const packagerIdentity = { ...keyId, description: 'Id of an `authenticated` secret key in `keys`.' } as const;

export const SIGNER_SCHEMA = {
  type: 'object',
  required: ['key', 'signText'],
  additionalProperties: false,
  properties: {
    key: { ...keyId, description: 'Id of a `sign` secret key in `keys`.' },
    signText: { type: 'string', description: 'Attached to and covered by the signature.' },
  },
} as const;

const signers = { type: 'array', maxItems: 1024, items: SIGNER_SCHEMA } as const;

/**
 * The release members of /workflow-package and /bootstrap-encrypt (oapp-format SPEC.md, format v2): the release
 * sequence the agent's rollback check compares, an optional expiry, and the frame version to write.
 * Checked further by `checkRelease` before the keys are parsed (ADR 0145).
 */
export const RELEASE_PROPERTIES = {
  sequence: {
    type: 'integer',
    minimum: 0,
    maximum: Number.MAX_SAFE_INTEGER,
    description:
      'The release sequence, 0 to 2^53 − 1, signed with the content: an agent refuses a package older than the ' +
      'newest it accepted for the package id. Default: whole seconds since the Unix epoch of the creation time ' +
      '(a clock-derived sequence). Not with `formatVersion` 1. Written as a whole number: a fraction or an ' +
      'exponent (`1e3`, `7.0`) is refused (422), never rounded.',
  },
  expiresAt: {
    type: 'string',
    pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]{3})?Z$',
    description:
      'UTC time after which agents refuse the package (plus their clock skew), later than its creation; written ' +
      'as YYYY-MM-DDTHH:MM:SS.sssZ. Not with `formatVersion` 1.',
  },
  formatVersion: {
    enum: [1, 2],
    description: 'The package format to write: 2 (default), or 1 for readers that predate version 2.',
  },
} as const;

export const PACKAGE_REQUEST_SCHEMA = {
  type: 'object',
  description: 'The `body` part of POST /workflow-package (docs/interfaces.md §1.4).',
  required: ['packageId', 'keys', 'encryptionKeys', 'packagerIdentityPrivateKey'],
  additionalProperties: false,
  properties: {
    packageId: { type: 'string', minLength: 1, maxLength: 256 },
    keys,
    signers,
    encryptionKeys: recipients,
    packagerIdentityPrivateKey: packagerIdentity,
    license: { type: 'object', description: 'Embedded license, covered by every signature.' },
    ...RELEASE_PROPERTIES,
  },
} as const;

export const BOOTSTRAP_ENCRYPT_REQUEST_SCHEMA = {
  type: 'object',
  description:
    'The `body` part of POST /bootstrap-encrypt. `signers` sign the bootstrap (administrators: an agent given ' +
    'their public keys refuses a bootstrap they did not sign); not with `formatVersion` 1.',
  required: ['keys', 'encryptionKeys', 'packagerIdentityPrivateKey'],
  additionalProperties: false,
  properties: {
    keys,
    signers,
    encryptionKeys: recipients,
    packagerIdentityPrivateKey: packagerIdentity,
    ...RELEASE_PROPERTIES,
  },
} as const;

export const STRING_ENCRYPT_REQUEST_SCHEMA = {
  type: 'object',
  description: 'The `body` part of POST /string-encrypt: exactly one `encryptionKeys` id.',
  required: ['keys', 'encryptionKeys', 'packagerIdentityPrivateKey'],
  additionalProperties: false,
  properties: {
    keys,
    encryptionKeys: { type: 'array', items: keyId, description: 'Exactly one id.' },
    packagerIdentityPrivateKey: packagerIdentity,
  },
} as const;

const signerRef = {
  oneOf: [
    keyId,
    {
      type: 'object',
      required: ['id'],
      additionalProperties: false,
      properties: { id: keyId, description: { type: 'string' } },
    },
  ],
} as const;

export const PACKAGING_SCHEMA = {
  type: 'object',
  description: 'How to verify the incoming package: a bootstrap `packaging` block (docs/interfaces.md §3.2).',
  required: ['packageId'],
  additionalProperties: false,
  properties: {
    packageId: { type: 'string', minLength: 1, maxLength: 256 },
    packagerIdentities: { type: 'array', maxItems: 1024, items: keyId },
    requiredSigners: { type: 'array', maxItems: 1024, items: signerRef },
    additionalSigners: { type: 'array', maxItems: 1024, items: signerRef },
    requiredAdditionalSignerCount: { type: 'integer', minimum: 0 },
    minimumSequence: {
      type: 'integer',
      minimum: 0,
      maximum: Number.MAX_SAFE_INTEGER,
      description:
        'The lowest release sequence accepted (POLICY_BELOW_MINIMUM below it; a format 1 package has none).',
    },
  },
} as const;

export const PACKAGE_ENVELOPE_REQUEST_SCHEMA = {
  type: 'object',
  description: 'The `body` part of POST /package-envelope.',
  required: ['keys', 'encryptionKeys', 'packagerIdentityPrivateKey', 'recipientKey', 'packaging'],
  additionalProperties: false,
  properties: {
    keys,
    signers,
    encryptionKeys: recipients,
    packagerIdentityPrivateKey: packagerIdentity,
    recipientKey: {
      ...keyId,
      description: 'Id of the receiver’s `authenticated` secret key that opens the package.',
    },
    packaging: PACKAGING_SCHEMA,
  },
} as const;

export type KeyInput = { id: string; purpose: string; type: string; keyHex: string };
export type SignerInput = { key: string; signText: string };
/** The members of {@link RELEASE_PROPERTIES}. */
export interface ReleaseRequest {
  sequence?: number;
  expiresAt?: string;
  formatVersion?: 1 | 2;
}
export interface PackageRequest extends ReleaseRequest {
  packageId: string;
  keys: KeyInput[];
  signers?: SignerInput[];
  encryptionKeys: string[];
  packagerIdentityPrivateKey: string;
  license?: Record<string, unknown>;
}
export type EncryptRequest = Pick<PackageRequest, 'keys' | 'encryptionKeys' | 'packagerIdentityPrivateKey'>;
export interface BootstrapEncryptRequest extends EncryptRequest, ReleaseRequest {
  signers?: SignerInput[];
}
export type SignerRef = string | { id: string; description?: string };
export interface PackageEnvelopeRequest extends EncryptRequest {
  signers?: SignerInput[];
  recipientKey: string;
  packaging: {
    packageId: string;
    packagerIdentities?: string[];
    requiredSigners?: SignerRef[];
    additionalSigners?: SignerRef[];
    requiredAdditionalSignerCount?: number;
    minimumSequence?: number;
  };
}
