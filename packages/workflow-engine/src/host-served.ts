/**
 * Step types the engine loads but the host serves (README "Host-served steps"): `httpFile` answers HTTP requests
 * from a packaged asset zip. `runStep` rejects them with `ENGINE_HOST_SERVED`.
 */
export const HOST_SERVED_TYPES: ReadonlySet<string> = new Set(['httpFile']);
