export { WorkflowError, WORKFLOW_ERROR_CODES } from './errors.js';
export type { WorkflowErrorCode } from './errors.js';
