import { describe, expect, it } from 'vitest';
import * as api from '../src/index.js';

describe('public surface', () => {
  it('exports exactly these names', () => {
    expect(Object.keys(api).sort()).toMatchInlineSnapshot(`
      [
        "BOOTSTRAP_SCHEMA",
        "DEFAULT_RESOURCE_DIRS",
        "FORBIDDEN_BOOTSTRAP_VARIABLES",
        "JSON_OBJECT_PROTOTYPE",
        "MANIFEST_OPS",
        "MANIFEST_SCHEMA",
        "MAX_COMPILED_BYTES",
        "MAX_JSON_BYTES",
        "MAX_JSON_DEPTH",
        "MAX_MANIFEST_CUSTOMIZATIONS",
        "MAX_MANIFEST_INCLUDES",
        "MAX_MANIFEST_PATH_LENGTH",
        "MAX_RESOURCE_BYTES",
        "MAX_RESOURCE_PATH_LENGTH",
        "MAX_SCRIPT_TIMEOUT_MS",
        "MAX_SECRETS_FILE_BYTES",
        "MAX_SUBSTITUTED_CHARS",
        "MAX_VARIABLE_NAME_LENGTH",
        "VARIABLE_NAME_PATTERN",
        "WORKFLOW_ERROR_CODES",
        "WORKFLOW_HASH_ALGORITHM",
        "WORKFLOW_HASH_SPEC",
        "WORKFLOW_SCHEMA",
        "WORKFLOW_SYNTAX_ERROR_CODES",
        "WorkflowError",
        "buildWorkflows",
        "canonicalize",
        "compareWorkflows",
        "compileSchema",
        "compileWorkflow",
        "formatManifestPath",
        "hashWorkflow",
        "isSyntaxErrorCode",
        "isWorkflowError",
        "parseManifestPath",
        "parseSecretsFile",
        "parseStrictJson",
        "readPackagedWorkflow",
        "schemaViolations",
        "substituteVariables",
        "validateBootstrap",
        "validateBootstrapWithVariables",
        "validateWorkflow",
      ]
    `);
  });
});
