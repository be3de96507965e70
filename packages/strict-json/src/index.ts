export { parseStrictJson, MAX_JSON_DEPTH } from './parse.js';
export type { JsonValue, JsonObject, ParseStrictJsonOptions } from './parse.js';
export { STRICT_JSON_ERROR_CODES, StrictJsonError, isStrictJsonError } from './errors.js';
export type { StrictJsonErrorCode, StrictJsonErrorDetails } from './errors.js';
