export {
  WorkflowError,
  WORKFLOW_ERROR_CODES,
  WORKFLOW_SYNTAX_ERROR_CODES,
  isSyntaxErrorCode,
  isWorkflowError,
} from './errors.js';
export type { WorkflowErrorCode, WorkflowErrorDetail, WorkflowErrorDetails } from './errors.js';
export { parseStrictJson, MAX_JSON_BYTES } from './strict-json.js';
export type { ParseStrictJsonOptions } from './strict-json.js';
export { MAX_JSON_DEPTH, JSON_OBJECT_PROTOTYPE } from './json-value.js';
export type { JsonValue, JsonObject } from './json-value.js';
export { canonicalize } from './canonical-json.js';
export { WORKFLOW_SCHEMA } from './workflow-schema.js';
export { validateWorkflow } from './validate-workflow.js';
export type { ValidateWorkflowOptions } from './validate-workflow.js';
export { compileWorkflow, MAX_COMPILED_BYTES } from './compile-workflow.js';
export type { CompileWorkflowOptions, CompileWorkflowResult, CompiledResource } from './compile-workflow.js';
export { DEFAULT_RESOURCE_DIRS, MAX_RESOURCE_BYTES } from './resource-resolver.js';
export { MAX_RESOURCE_PATH_LENGTH } from './resource-path.js';
export { hashWorkflow, WORKFLOW_HASH_SPEC, WORKFLOW_HASH_ALGORITHM } from './hash-workflow.js';
export { readPackagedWorkflow } from './packaged-workflow.js';
export type {
  CompiledWorkflow,
  Comment,
  Processor,
  Step,
  StepProperties,
  StringBoolean,
  Trigger,
  WorkflowDefinition,
  WorkflowFile,
} from './types.js';
export { BOOTSTRAP_SCHEMA, MAX_SCRIPT_TIMEOUT_MS } from './bootstrap-schema.js';
export { validateBootstrap, validateBootstrapWithVariables } from './validate-bootstrap.js';
export type {
  SubstitutedBootstrap,
  ValidateBootstrapOptions,
  ValidateBootstrapWithVariablesOptions,
} from './validate-bootstrap.js';
export {
  substituteVariables,
  parseSecretsFile,
  VARIABLE_NAME_PATTERN,
  FORBIDDEN_BOOTSTRAP_VARIABLES,
  MAX_VARIABLE_NAME_LENGTH,
  MAX_SECRETS_FILE_BYTES,
  MAX_SUBSTITUTED_CHARS,
} from './bootstrap-variables.js';
export type {
  SubstituteVariablesOptions,
  SubstitutionResult,
  WholeReference,
} from './bootstrap-variables.js';
export type {
  Bootstrap,
  BootstrapFileAccess,
  BootstrapHost,
  BootstrapKey,
  BootstrapPackaging,
  BootstrapServer,
  BootstrapSigner,
  DeploymentRecord,
} from './bootstrap-types.js';
export { buildWorkflows, MAX_MANIFEST_INCLUDES, MAX_MANIFEST_CUSTOMIZATIONS } from './build-workflows.js';
export type { BuildWorkflowsOptions, BuildWorkflowsResult, BuiltInclude } from './build-workflows.js';
export { MANIFEST_SCHEMA } from './manifest-schema.js';
export { MANIFEST_OPS } from './manifest-apply.js';
export type { ManifestOp } from './manifest-apply.js';
export { parseManifestPath, formatManifestPath, MAX_MANIFEST_PATH_LENGTH } from './manifest-path.js';
export type { ManifestPathSegment } from './manifest-path.js';
export { compareWorkflows } from './compare-workflows.js';
export type { WorkflowDifference } from './compare-workflows.js';
export { compileSchema, schemaViolations } from './internal/schema-check.js';
export type { LazyValidator } from './internal/schema-check.js';
