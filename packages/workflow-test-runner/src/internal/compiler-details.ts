import type { TestRunnerErrorDetail, TestRunnerErrorDetails } from '../errors.js';

/**
 * The `details` of a test runner error that wraps a compiler error: its code as `workflowCode` and its failed
 * fields (the compiler's `details.errors`) as `errors`, so both packages list failed fields under the same key.
 */
export function compilerDetails(err: unknown): TestRunnerErrorDetails {
  const e = (typeof err === 'object' && err !== null ? err : {}) as { code?: unknown; details?: unknown };
  const workflowCode = typeof e.code === 'string' ? e.code : 'unknown';
  const list = isRecord(e.details) ? e.details['errors'] : undefined;
  const errors = Array.isArray(list) ? list.filter(isFieldError) : [];
  return errors.length > 0 ? { workflowCode, errors } : { workflowCode };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isFieldError(v: unknown): v is TestRunnerErrorDetail {
  return isRecord(v) && typeof v['pointer'] === 'string' && typeof v['detail'] === 'string';
}
