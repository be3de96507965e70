/**
 * `@org/workflow-engine/prewarm` (ADR 0149): the sandbox pool alone, without the engine's other modules
 * (persistence, crypto, zip, the scheduler), so a program can start the sandbox before it loads the rest of its
 * modules. It is the same pool as the main entry's (one chunk of the build). Its CommonJS form
 * (scripts/prewarm-cjs.mjs) re-exports the main CommonJS entry's and is not light.
 */
export { prewarmSandbox } from './sandbox.js';
