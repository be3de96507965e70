/**
 * JSON Schema (draft-07) of a workflow file, docs/interfaces.md §4. Unknown properties are rejected at every level
 * except inside free-form `data` objects and `messages[].value`. Rules a schema states badly (exactly one
 * processor form, unique `stepId`) are checked in code after the schema passes (see validate-workflow.ts).
 */

/** `true | false | "true" | "false" | "${VAR}"`. */
export const STRING_BOOLEAN_SCHEMA = {
  type: ['boolean', 'string'],
  pattern: '^(true|false|\\$\\{[A-Za-z_][A-Za-z0-9_]*\\})$',
} as const;

/** A `comment`: a string or a list of strings; removed by compile. */
export const COMMENT_SCHEMA = { type: ['string', 'array'], items: { type: 'string' } } as const;

const ms = { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER } as const;
const nonEmpty = { type: 'string', minLength: 1 } as const;
const freeObject = { type: 'object' } as const;
const processorRef = { $ref: '#/definitions/processor' } as const;

function strictObject(properties: Record<string, unknown>, required: string[] = []): Record<string, unknown> {
  return {
    type: 'object',
    additionalProperties: false,
    required,
    properties: { comment: COMMENT_SCHEMA, ...properties },
  };
}

const processor = strictObject({
  script: { type: ['string', 'null'] },
  resource: { type: 'string', maxLength: 1024 },
  resourceName: { type: 'string', maxLength: 1024 },
  processors: { type: 'array', minItems: 1, items: processorRef },
  data: freeObject,
});

const noTrace = STRING_BOOLEAN_SCHEMA;

const trigger = strictObject({
  runOnce: STRING_BOOLEAN_SCHEMA,
  runOnceNoTrace: STRING_BOOLEAN_SCHEMA,
  timer: strictObject({ period: { ...ms, minimum: 1 }, delay: ms, noTrace }, ['period']),
  http: strictObject(
    {
      server: nonEmpty,
      path: nonEmpty,
      method: { type: 'string', pattern: '^[A-Za-z]+$' },
      multiPartUploadByteLimit: { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER },
      noTrace,
    },
    ['server', 'path'],
  ),
  fileWatcher: strictObject(
    {
      bootstrapFileId: nonEmpty,
      eventSplitter: { type: 'string' },
      patterns: { type: 'array', items: { type: 'string' } },
      splitAtEnd: STRING_BOOLEAN_SCHEMA,
      noTrace,
    },
    ['bootstrapFileId', 'eventSplitter'],
  ),
  tcp: {
    ...strictObject(
      {
        server: nonEmpty,
        fixedLength: { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER },
        delimiter: { type: 'string', minLength: 1 },
        stripDelimiter: STRING_BOOLEAN_SCHEMA,
        batchSize: { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER },
        maxBatchWindowMillis: ms,
        noTrace,
      },
      ['server'],
    ),
    description: 'a tcp trigger needs exactly one of fixedLength, delimiter',
    oneOf: [{ required: ['fixedLength'] }, { required: ['delimiter'] }],
  },
  deploymentAccess: strictObject({ ids: { type: 'array', minItems: 1, items: nonEmpty }, noTrace }, ['ids']),
});

const PROCESSOR_FIELDS = [
  'authenticationProcessor',
  'urlGenerator',
  'payloadGenerator',
  'resultsProcessor',
  'splitGenerator',
  'itemResultProcessor',
  'httpConnectFailedProcessor',
] as const;

/** Step fields, shared by steps and `defaultStepProperties`. */
function stepProperties(): Record<string, unknown> {
  const props: Record<string, unknown> = {
    stepId: nonEmpty,
    type: { enum: ['scripted', 'scripted-split-aggregate', 'scripted-auth', 'httpFile'] },
    enabled: STRING_BOOLEAN_SCHEMA,
    debug: STRING_BOOLEAN_SCHEMA,
    data: freeObject,
    timestampOverride: ms,
    trigger: { $ref: '#/definitions/trigger' },
    httpStatusHandling: {
      type: 'object',
      properties: { comment: COMMENT_SCHEMA },
      // An exact status (`"404"`) or an inclusive range (`"300-599"`, used by real apps).
      patternProperties: { '^[1-5][0-9][0-9](-[1-5][0-9][0-9])?$': processorRef },
      additionalProperties: false,
    },
    httpTimeout: ms,
    singleThreaded: { enum: ['none', 'return'] },
    persistenceFile: nonEmpty,
    persistenceFileFlush: STRING_BOOLEAN_SCHEMA,
    persistence: strictObject(
      {
        persistenceFile: nonEmpty,
        hexSymmetricKey: { type: 'string', pattern: '^[0-9a-fA-F]{64}$' },
        saveRatio: { type: 'number', minimum: 0 },
        obfuscate: STRING_BOOLEAN_SCHEMA,
      },
      ['persistenceFile'],
    ),
  };
  for (const f of PROCESSOR_FIELDS) props[f] = processorRef;
  return props;
}

const step = strictObject(stepProperties(), ['stepId']);
const defaultStepProperties = strictObject(stepProperties());

const workflow = strictObject(
  {
    name: nonEmpty,
    enabled: STRING_BOOLEAN_SCHEMA,
    steps: { type: 'array', minItems: 1, items: { $ref: '#/definitions/step' } },
    defaultStepProperties: { $ref: '#/definitions/defaultStepProperties' },
    data: freeObject,
  },
  ['name', 'steps'],
);

const message = strictObject({ expiry: ms, stepId: nonEmpty, key: { type: 'string' }, value: {} });

/** The JSON Schema of a workflow file (source or compiled form), as a plain object for reuse. */
export const WORKFLOW_SCHEMA = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  $id: 'urn:org:workflow-compiler:workflow:v1',
  title: 'workflow file',
  ...strictObject(
    {
      workflows: { type: 'array', minItems: 1, items: { $ref: '#/definitions/workflow' } },
      data: freeObject,
      defaultStepProperties: { $ref: '#/definitions/defaultStepProperties' },
      messages: { type: 'array', items: message },
      random: { type: 'number' },
    },
    ['workflows'],
  ),
  definitions: { processor, trigger, step, defaultStepProperties, workflow },
} as const;

/** Step fields whose value is a processor (besides `httpStatusHandling` entries). */
export const STEP_PROCESSOR_FIELDS: readonly string[] = PROCESSOR_FIELDS;
