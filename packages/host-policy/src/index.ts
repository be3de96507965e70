export { PolicyError, POLICY_ERROR_CODES, isPolicyError } from './errors.js';
export type { PolicyErrorCode, PolicyErrorDetails } from './errors.js';
export { compileHostPolicy } from './compile.js';
export type { CompileHostPolicyOptions, CompiledHost, HostPolicy } from './compile.js';
export { convertLegacyHosts } from './config.js';
export type { HostEntry, LegacyHostEntry, LegacyHostsMap, StringBoolean } from './config.js';
export type { AllowListEntry } from './allow-list.js';
export type { BaseUrl } from './base-url.js';
export type { CompiledHeaders } from './headers.js';
export { FORBIDDEN_HEADER_NAMES, isForbiddenHeader, isHeaderName, isHeaderValue } from './headers.js';
export { checkOutboundCall } from './decide.js';
export type { AllowedCall, DeniedCall, OutboundCall, OutboundDecision } from './decide.js';
export { classifyAddress, isAddressKindAllowed, isPrivateAddress, OPT_IN_ADDRESS_KINDS } from './address.js';
export type { AddressKind } from './address.js';
export { HTTP_METHODS, normalizeMethod } from './methods.js';
export type { HttpMethod } from './methods.js';
export {
  DEFAULT_TIMEOUT_MS,
  MAX_ALLOW_LIST_ENTRIES,
  MAX_BASE_URL_CHARS,
  MAX_HEADER_VALUE_CHARS,
  MAX_HEADERS,
  MAX_HOST_ID_CHARS,
  MAX_PATH_CHARS,
  MAX_PATTERN_CHARS,
  MAX_PATTERN_COST,
  MAX_REDIRECTS,
} from './limits.js';
export { sendOutbound } from './send.js';
export type { LookupFunction, OutboundResponse, SendOutboundOptions } from './send.js';
