// The browser's `internal/native.ts` of @org/envelope-crypto (ADR 0146): node:crypto KeyObjects do not exist
// here, and the js engine never asks for them.
function unavailable(name: string): never {
  throw new Error(`${name} is not in the browser build (the browser runs the js engine)`);
}
export const nativeSecretKey = (): never => unavailable('nativeSecretKey');
export const nativePublicKey = (): never => unavailable('nativePublicKey');
export const rawPublicBytes = (): never => unavailable('rawPublicBytes');
