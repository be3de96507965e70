import { expect, it } from 'vitest';
import * as runtime from '../src/index.js';

// The main entry is the README's API; @org/workflow-runtime/internal is unstable (README).
it('keeps the public surface of the runtime stable', () => {
  expect(Object.keys(runtime).sort()).toMatchInlineSnapshot(`
    [
      "AGENT_ERROR_CODES",
      "AgentError",
      "DEFAULT_ASSET_LIMITS",
      "DEFAULT_FILE_LIMITS",
      "DEFAULT_LIMITS",
      "DEFAULT_TCP_LIMITS",
      "DEFAULT_TIMEOUTS",
      "KNOWN_METHODS",
      "LOG_LEVELS",
      "MAX_REQUEST_ID_CHARS",
      "NO_METRICS",
      "REQUEST_ID_PATTERN",
      "applyServerTimeouts",
      "closeAll",
      "closeGracefully",
      "createOutput",
      "createRuntime",
      "createStringDecryptor",
      "hostPolicyOf",
      "isAgentError",
      "isCodedError",
      "isDraining",
      "listenAll",
      "packagerGranted",
      "readRestrictedData",
      "registerRecordSecrets",
      "requestIdOf",
      "trackConnections",
    ]
  `);
});

it('keeps the runtime parts in ./internal, apart from the main entry', async () => {
  const internal = Object.keys(await import('../src/internal.js')).sort();
  expect(internal.filter((k) => Object.keys(runtime).includes(k))).toEqual([]);
  expect(internal).toMatchInlineSnapshot(`
    [
      "DELIBERATE_DIFFERENCES",
      "DEPLOYMENT_ACCESS_PROPERTIES",
      "IGNORED_RECORD_FIELDS",
      "MAX_CONNECTIONS_CHECK_MS",
      "RunTracker",
      "SUPPORTED_TRIGGERS",
      "TCP_PROPERTIES",
      "closePersistence",
      "connectionsCheckingIntervalOf",
      "createEngineHost",
      "planPersistence",
      "unsupportedUses",
      "withContext",
    ]
  `);
});
