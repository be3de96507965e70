import { COMMENT_SCHEMA } from './workflow-schema.js';

/**
 * JSON Schema (draft-07) of a build manifest (docs/interfaces.md §8), as a plain object for reuse. `op` is only
 * typed here so that an unknown op gets its own code (`WORKFLOW_MANIFEST_OP_UNKNOWN`) naming its position.
 */
export const MANIFEST_SCHEMA = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  $id: 'urn:org:workflow-compiler:manifest:v1',
  title: 'build manifest',
  type: 'object',
  additionalProperties: false,
  required: ['includes'],
  properties: {
    comment: COMMENT_SCHEMA,
    includes: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['sourceWorkflow'],
        properties: {
          comment: COMMENT_SCHEMA,
          sourceWorkflow: { type: 'string', minLength: 1, maxLength: 1024 },
          customizations: {
            type: 'array',
            items: {
              type: 'object',
              additionalProperties: false,
              required: ['op', 'sourcePath'],
              properties: {
                comment: COMMENT_SCHEMA,
                op: { type: 'string' },
                sourcePath: { type: 'string', minLength: 1 },
                sourceValue: {},
              },
            },
          },
        },
      },
    },
  },
} as const;
