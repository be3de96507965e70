const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

type MaybeWellFormed = { isWellFormed?: (this: string) => boolean };
const native = (String.prototype as MaybeWellFormed).isWellFormed;

/** True when `s` has no lone surrogate (ES2024 `isWellFormed`, with a regex fallback). */
export function isWellFormedString(s: string): boolean {
  return native !== undefined ? native.call(s) : !LONE_SURROGATE.test(s);
}
