// The browser's `internal/sodium.ts` of @org/envelope-crypto (ADR 0146): sodium-native never loads here.
export type Sodium = never;
export function loadSodium(): undefined {
  return undefined;
}
export const sodium: undefined = undefined;
