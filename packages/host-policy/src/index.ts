export { PolicyError, POLICY_ERROR_CODES } from './errors.js';
export type { PolicyErrorCode } from './errors.js';
