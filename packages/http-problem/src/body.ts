/** Problem `type` URIs (ADR 0004): this prefix + the code, lower case, `_` → `-`. */
export const PROBLEM_TYPE_PREFIX = 'urn:example:oapp:problem:';

/** The stable problem type URI of a code. */
export function problemType(code: string): string {
  return PROBLEM_TYPE_PREFIX + code.toLowerCase().replaceAll('_', '-');
}

/** A short fixed title per code (RFC 9457 §3.1.3): the code in words without its prefix, never request data. */
export function problemTitle(code: string): string {
  const text = code.toLowerCase().split('_').slice(1).join(' ');
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** One failed field of a request (RFC 6901 pointer into the JSON it names). */
export interface ProblemFieldError {
  readonly pointer: string;
  readonly detail: string;
}

/** An RFC 9457 body as both apps send it: the standard members, `code`, optional `errors` and extensions. */
export interface ProblemBody {
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly detail?: string;
  readonly instance: string;
  readonly code: string;
  readonly errors?: readonly ProblemFieldError[];
  readonly [extension: string]: unknown;
}

/** What a coded problem may add to the standard members. */
export interface CodedProblemExtras {
  readonly errors?: readonly ProblemFieldError[] | undefined;
  /** Extra members (never `type`, `status` and the others: those are written last and win). */
  readonly extensions?: Readonly<Record<string, unknown>> | undefined;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const REQUEST_INSTANCE_PREFIX = 'urn:example:oapp:request:';

/**
 * The problem `instance` of a request id: `urn:uuid:<id>` for a UUID, else `urn:example:oapp:request:<id>` (an
 * inbound `X-Request-Id` both apps kept: 1 to 128 of `[A-Za-z0-9._:-]`, all valid in a URN).
 */
export function instanceOf(requestId: string): string {
  return UUID.test(requestId) ? `urn:uuid:${requestId}` : REQUEST_INSTANCE_PREFIX + requestId;
}

/** The request id an `instance` names, or undefined for any other URI. */
export function requestIdOfInstance(instance: string): string | undefined {
  if (instance.startsWith('urn:uuid:')) return instance.slice('urn:uuid:'.length);
  if (instance.startsWith(REQUEST_INSTANCE_PREFIX)) return instance.slice(REQUEST_INSTANCE_PREFIX.length);
  return undefined;
}

/** The body of a coded error: `detail` is the error's safe message; `instance` names the request ({@link instanceOf}). */
export function codedProblem(
  code: string,
  status: number,
  detail: string,
  requestId: string,
  extras: CodedProblemExtras = {},
): ProblemBody {
  return {
    ...extras.extensions,
    type: problemType(code),
    title: problemTitle(code),
    status,
    detail,
    instance: instanceOf(requestId),
    code,
    ...(extras.errors === undefined ? {} : { errors: extras.errors }),
  };
}

/** The generic 500: nothing from the error itself (docs/engineering.md §2: no internals in 500 bodies). */
export function internalProblem(requestId: string): ProblemBody {
  return {
    type: 'about:blank',
    title: 'Internal Server Error',
    status: 500,
    instance: instanceOf(requestId),
    code: 'INTERNAL',
  };
}
