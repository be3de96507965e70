/** The HTTP methods a host entry or a workflow may use (docs/interfaces.md §3.3). Compared case-insensitively. */
export const HTTP_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH'] as const;

/** One of {@link HTTP_METHODS}, upper case. */
export type HttpMethod = (typeof HTTP_METHODS)[number];

const BY_SPELLING: ReadonlyMap<string, HttpMethod> = new Map(
  HTTP_METHODS.flatMap((m) => [
    [m, m],
    [m.toLowerCase(), m],
  ]),
);

/**
 * Upper-case form of `method` when it names one of {@link HTTP_METHODS} in any letter case, else undefined.
 *
 * @throws never
 */
export function normalizeMethod(method: unknown): HttpMethod | undefined {
  // ASCII letters only: toUpperCase would map 'ı' and 'ſ' to 'I' and 'S'.
  if (typeof method !== 'string') return undefined;
  const exact = BY_SPELLING.get(method);
  if (exact !== undefined || method.length > 7 || !/^[A-Za-z]+$/.test(method)) return exact;
  return BY_SPELLING.get(method.toUpperCase());
}
