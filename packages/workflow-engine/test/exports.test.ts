import { expect, it } from 'vitest';
import * as engine from '../src/index.js';

it('keeps the public surface of the engine stable', () => {
  expect(Object.keys(engine).sort()).toMatchInlineSnapshot(`
    [
      "DEFAULT_LIMITS",
      "DEFAULT_PERSISTENCE_LIMITS",
      "ENGINE_ERROR_CODES",
      "EngineError",
      "MAX_FORGOTTEN_RUNS",
      "MAX_SEND_DEPTH",
      "REDACTED",
      "checkPersistenceSpec",
      "createLmdbPersistence",
      "createWorkflowEngine",
      "persistenceSpecs",
      "storePathOf",
    ]
  `);
  expect(engine.ENGINE_ERROR_CODES).toMatchInlineSnapshot(`
    [
      "ENGINE_STEP_NOT_FOUND",
      "ENGINE_INVALID_WORKFLOW",
      "ENGINE_TIMEOUT",
      "ENGINE_MEMORY",
      "ENGINE_SCRIPT_ERROR",
      "ENGINE_UNSUPPORTED",
      "ENGINE_NOT_PERMITTED",
      "ENGINE_SEND_DEPTH",
      "ENGINE_LIMIT",
      "ENGINE_SANDBOX_FAILED",
      "ENGINE_DISPOSED",
      "ENGINE_OUTBOUND_FAILED",
      "ENGINE_NO_PERSISTENCE",
      "ENGINE_PERSISTENCE_INVALID",
      "ENGINE_PERSISTENCE_CORRUPT",
      "ENGINE_PERSISTENCE_KEY",
      "ENGINE_PERSISTENCE_LIMIT",
      "ENGINE_PERSISTENCE_FAILED",
    ]
  `);
});
