// The request error codes and their class live in @org/packager (ADR 0138); the app answers them.
export { REQUEST_ERROR_CODES, RequestError } from '@org/packager';
export type { FieldError, RequestErrorCode, RequestErrorOptions } from '@org/packager';
