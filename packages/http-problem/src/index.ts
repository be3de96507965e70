export {
  PROBLEM_TYPE_PREFIX,
  codedProblem,
  instanceOf,
  internalProblem,
  problemTitle,
  problemType,
  requestIdOfInstance,
} from './body.js';
export type { CodedProblemExtras, ProblemBody, ProblemFieldError } from './body.js';
export {
  DRAIN_MAX_BYTES,
  DRAIN_MAX_MS,
  PROBLEM_CODE_LOCAL,
  PROBLEM_HEADERS,
  requestIdOf,
  writeProblem,
} from './write.js';
export { codedErrorGuard } from './guard.js';
export type { CodedError } from './guard.js';
export { writeInternalProblem } from './internal-error.js';
export type { ProblemLog } from './internal-error.js';
export { MAX_REQUEST_ID_CHARS, REQUEST_ID_PATTERN, requestIdFrom } from './request-id.js';
