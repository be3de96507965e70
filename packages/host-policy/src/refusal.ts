import type { PolicyErrorCode } from './errors.js';

/** Why a call was refused: the code, the stable rule name (SPEC.md §8) and a lowercase message without secrets. */
export interface Refusal {
  readonly code: PolicyErrorCode;
  readonly rule: string;
  readonly message: string;
}

/** A frozen {@link Refusal}; the hot path returns these shared constants instead of allocating. */
export const refusal = (code: PolicyErrorCode, rule: string, message: string): Refusal =>
  Object.freeze({ code, rule, message });
