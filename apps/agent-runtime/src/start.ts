// The agent's start once its arguments are read (`main.ts` imports this module after starting the sandbox, ADR 0149).
import { setFlagsFromString } from 'node:v8';
import { prewarmSandbox, Redactor, setSandboxIdleMs, setSandboxWorkers } from '@org/workflow-engine';
import { createAdminServer, listenAdmin, Readiness } from './admin.js';
import { createApp, type Agent } from './app.js';
import { createAgentMetrics } from './metrics.js';
import { EXIT_START_FAILED } from './startup/args.js';
import { loadBootstrap, trustOptionsOf } from './startup/bootstrap-source.js';
import { loadConfig, v8FlagsOf, type Config } from './startup/config.js';
import { loadBootstrapVariables } from './startup/variables.js';
import { isCodedError } from '@org/workflow-runtime';
import { closeAll, listenAll } from '@org/workflow-runtime';

/**
 * One JSON line on stderr and exit 1 (S44): the code and a message that names the problem and never
 * carries key material; schema problems are listed one by one; never a stack trace.
 */
/**
 * Values from the secrets file, known before the bootstrap is read: a start-up error that quotes a bootstrap value
 * (a key id, a host) that came from that file shows the marker instead (review finding, ADR 0059).
 */
const startupSecrets = new Redactor();

function fatal(err: unknown): never {
  const coded = isCodedError(err);
  const listed = coded ? (err.details as { errors?: unknown } | null | undefined)?.errors : undefined;
  const fields = Array.isArray(listed) ? (listed as { pointer?: unknown; detail?: unknown }[]) : [];
  const problems = fields
    .filter(
      (d): d is { pointer: string; detail: string } =>
        typeof d.pointer === 'string' && typeof d.detail === 'string',
    )
    .map((d) => startupSecrets.redact(`${d.pointer}: ${d.detail}`));
  const line = {
    ts: new Date().toISOString(),
    level: 'fatal',
    code: coded ? err.code : 'AGENT_START_FAILED',
    msg: coded ? startupSecrets.redact(err.message) : 'the agent could not start',
    ...(problems.length > 0 ? { problems } : {}),
  };
  process.stderr.write(JSON.stringify(line) + '\n');
  process.exit(EXIT_START_FAILED);
}

/**
 * SIGTERM/SIGINT: the trigger servers stop accepting and every answer from then on says `Connection: close`
 * (idle keep-alive sockets close at once); the runtime starts no new run (HTTP triggers answer 503
 * `AGENT_SHUTTING_DOWN`, counted, never logged one by one) and waits for the runs in flight. The process exits as
 * soon as both are done, or after `AGENT_SHUTDOWN_TIMEOUT_MS` at the latest (README, "Shutdown").
 */
function onSignals(agent: Agent, config: Config, readiness: Readiness): void {
  const drain = (signal: string) => {
    readiness.set('draining');
    agent.output.info('shutting down', { signal });
    const ms = config.timeouts.shutdownMs;
    void Promise.all([closeAll(agent, ms), agent.stop(ms)]).then(([, idle]) => {
      agent.output.info('stopped', { drained: idle, refusedRequests: agent.tracker.refused });
      process.exit(0);
    });
  };
  process.once('SIGTERM', () => drain('SIGTERM'));
  process.once('SIGINT', () => drain('SIGINT'));
}

async function start(argv: readonly string[]): Promise<void> {
  const config = loadConfig(process.env, argv);
  // Process-wide: the main thread's heap checks them as it grows, and sandbox workers start with them (ADR 0119, 0122).
  for (const f of v8FlagsOf(config)) setFlagsFromString(f);
  if (config.sandboxWorkers !== undefined) setSandboxWorkers(config.sandboxWorkers);
  if (config.sandboxIdleMs !== undefined) setSandboxIdleMs(config.sandboxIdleMs);
  // Unless main.ts started it already (it does unless AGENT_OPTIMIZE_FOR_SIZE is set): now that the flags are set.
  prewarmSandbox();
  const readiness = new Readiness();
  const metrics = createAgentMetrics({ defaults: true });
  const admin =
    config.admin === undefined || config.admin === 'off'
      ? undefined
      : await listenAdmin(createAdminServer({ readiness, registry: metrics.registry }), config.admin);
  const variables = loadBootstrapVariables(process.env);
  for (const name of variables.secretNames) startupSecrets.add(variables.values.get(name) ?? '');
  const { bootstrap, form, secrets, trust } = await loadBootstrap(
    config.bootstrap,
    config.bootstrapSecretKey,
    variables,
    trustOptionsOf(config),
  );
  const agent = await createApp({
    bootstrap,
    bootstrapForm: form,
    bootstrapTrust: trust,
    config,
    secrets,
    sink: (line) => process.stdout.write(line),
    metrics: metrics.runtime,
  });
  const servers = await listenAll(agent);
  // Before the `listening` line: whoever waits for it may send SIGTERM at once, and without a handler the signal
  // would end the process instead of draining it.
  onSignals(agent, config, readiness);
  agent.output.info('listening', { bootstrap: form, servers, ...(admin ? { admin: [admin] } : {}) });
  agent.startTriggers();
  readiness.set('ready');
}

/** Starts the agent with its bootstrap argument (if any); a failure is {@link fatal}. */
export function run(argv: readonly string[]): Promise<void> {
  return start(argv).catch(fatal);
}
