/**
 * JSON Schemas (draft-07) of `testrunner.config.json` and `*.test.json` (docs/interfaces.md §7.2, §7.3), as plain
 * objects. Both accept the legacy spellings seen in real test suites; `parseRunnerConfig` and `parseTestFile`
 * normalise them and report each legacy field once.
 */

const str = { type: 'string' } as const;
const nonEmpty = { type: 'string', minLength: 1 } as const;
const comment = { type: ['string', 'array'], items: str } as const;
const stringMap = { type: 'object', additionalProperties: str } as const;
const stringListMap = {
  type: 'object',
  additionalProperties: { type: ['string', 'array'], items: str },
} as const;
/** `true`, `false`, `"true"`, `"false"`: the reference accepts booleans as strings (`"ignore": "true"`). */
const looseBoolean = { enum: [true, false, 'true', 'false'] } as const;
const HTTP_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH'];
const method = { type: 'string', pattern: `^(?:${HTTP_METHODS.join('|')})$`, description: 'an HTTP method' };
/** An HTTP status as an integer or as a numeric string (`"222"` is seen in real tests). */
const status = {
  anyOf: [
    { type: 'integer', minimum: 100, maximum: 599 },
    { type: 'string', pattern: '^[1-5][0-9]{2}$' },
  ],
  description: 'an HTTP status from 100 to 599, as an integer or a numeric string',
};
const dirList = { type: 'array', minItems: 1, maxItems: 64, items: nonEmpty } as const;

/** Upper bound on `secondsToWaitForCompletion` (real suites use 100000). */
export const MAX_WAIT_SECONDS = 1_000_000;

/** The JSON Schema of `testrunner.config.json`. */
export const RUNNER_CONFIG_SCHEMA = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  $id: 'urn:org:workflow-test-runner:config:v1',
  title: 'testrunner.config.json',
  type: 'object',
  additionalProperties: false,
  properties: {
    comment,
    resourceDir: nonEmpty,
    resourceDirs: dirList,
    testDir: nonEmpty,
    testDirs: dirList,
    fileRoot: nonEmpty,
    concurrency: { type: 'integer', minimum: 1, maximum: 64 },
    iterations: { type: 'integer', minimum: 1, maximum: 10_000 },
    stopOnFailure: looseBoolean,
    debug: looseBoolean,
    variables: stringMap,
    license: str,
  },
  allOf: [
    {
      description: 'give exactly one of resourceDir, resourceDirs',
      oneOf: [{ required: ['resourceDir'] }, { required: ['resourceDirs'] }],
    },
    {
      description: 'give exactly one of testDir, testDirs',
      oneOf: [{ required: ['testDir'] }, { required: ['testDirs'] }],
    },
  ],
} as const;

const mockEndpoint = {
  type: 'object',
  additionalProperties: false,
  required: ['whenThisIsCalled'],
  properties: {
    comment,
    whenThisIsCalled: nonEmpty,
    withMethod: method,
    expectedPayload: str,
    expectedHeaders: stringListMap,
    returnThisFile: nonEmpty,
    returnThisBody: str,
    returnThisStatusCode: status,
    mockedHeaders: stringListMap,
    thisManyTimes: { type: 'integer', minimum: 1, maximum: 1_000_000 },
    delay: { type: 'integer', minimum: 0, maximum: 600_000 },
  },
  allOf: [
    {
      description: 'give returnThisFile or returnThisBody, not both',
      not: { required: ['returnThisFile', 'returnThisBody'] },
    },
  ],
};

const metric = {
  type: 'object',
  additionalProperties: false,
  required: ['key', 'value'],
  properties: {
    comment,
    key: str,
    value: { type: 'number' },
    timestamp: { type: 'integer', minimum: 0 },
    dimensionMap: stringMap,
    toThisRoute: str,
  },
};

const call = {
  type: 'object',
  additionalProperties: false,
  required: ['url'],
  properties: {
    comment,
    url: nonEmpty,
    method,
    headers: { type: 'array', items: { type: 'array', minItems: 2, maxItems: 2, items: [nonEmpty, str] } },
    body: str,
    expectedResponse: str,
    expectedResponseCode: status,
    expectedSize: { type: 'integer', minimum: 0 },
    timeoutSeconds: { type: 'number', exclusiveMinimum: 0, maximum: MAX_WAIT_SECONDS },
  },
};

/** The JSON Schema of a `*.test.json` file. */
export const TEST_FILE_SCHEMA = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  $id: 'urn:org:workflow-test-runner:test:v1',
  title: '*.test.json',
  type: 'object',
  additionalProperties: false,
  required: ['fromDirectory'],
  properties: {
    comment,
    enabled: looseBoolean,
    ignore: looseBoolean,
    ignored: looseBoolean,
    fromDirectory: str,
    testThisStep: nonEmpty,
    testThisRoute: nonEmpty,
    useThisTestConfigFile: nonEmpty,
    useThisTestBootstrapFile: nonEmpty,
    mockEndpointResponses: { type: 'array', items: mockEndpoint },
    theseMetricsShouldHaveBeenSent: { type: 'array', items: metric },
    theseLogsShouldHaveBeenSent: { type: 'array', items: str },
    logsShouldNotContain: { type: 'array', items: nonEmpty },
    makeTheseCalls: { type: 'array', items: call },
    timestampOverride: { type: 'integer', minimum: 0 },
    secondsToWaitForCompletion: { type: 'number', minimum: 0, maximum: MAX_WAIT_SECONDS },
    data: { type: 'object' },
    variables: stringMap,
    manifest: {
      type: 'object',
      properties: { comment, includes: { type: 'array' }, customizations: { type: 'array' } },
      additionalProperties: false,
      oneOf: [{ required: ['includes'] }, { required: ['customizations'] }],
      description:
        'a manifest has includes (build from several files) or customizations (edit the test workflow)',
    },
  },
  allOf: [
    {
      description: 'give testThisStep (or the legacy testThisRoute), not both',
      oneOf: [{ required: ['testThisStep'] }, { required: ['testThisRoute'] }],
    },
    {
      if: { required: ['manifest'], properties: { manifest: { type: 'object', required: ['includes'] } } },
      then: {
        description: 'give useThisTestConfigFile or a manifest with includes, not both',
        not: { required: ['useThisTestConfigFile'] },
      },
      else: { required: ['useThisTestConfigFile'] },
    },
  ],
} as const;
