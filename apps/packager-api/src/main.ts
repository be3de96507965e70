import type { AddressInfo } from 'node:net';
import { createApp } from './app.js';
import { isClusterPrimary, runPrimary, workerId } from './cluster.js';
import { ConfigError, loadConfig, prepareResourceDirs, type Config } from './config.js';
import { createBatchingSink, createLogger, type Logger } from './logger.js';
import { createMetrics } from './metrics.js';
import { Readiness } from './readiness.js';
import { closeGracefully } from '@org/http-drain';
import { createHttpServer } from './server.js';
import { appVersion, EXIT_START_FAILED, EXIT_USAGE, parseArgs, startupFailureLine } from './startup.js';

const sink = createBatchingSink((text) => process.stdout.write(text));
// Pending log lines are written before any exit (stdout to a file or pipe is synchronous on Linux).
process.on('exit', () => sink.flush());

/** Start-up failed: the one fatal line on stderr (same shape as the agent's), exit 1. */
function fatal(code: string, msg: string): never {
  sink.flush();
  process.stderr.write(startupFailureLine(code, msg));
  process.exit(EXIT_START_FAILED);
}

function start(config: Config, resourceDirs: string[], log: Logger): void {
  const readiness = new Readiness('starting');
  const metrics = createMetrics({ defaults: true });
  const app = createApp({
    limits: config.limits,
    resourceDirs,
    log,
    readiness,
    metrics,
    tokens: config.tokens,
  });
  const server = createHttpServer(app, config.limits, config.timeouts, log, metrics, config.tokens);
  server.listen(config.port, config.bindAddress, () => {
    const { port, address } = server.address() as AddressInfo;
    readiness.set('ready');
    log.info('listening', { port, address, resourceDirs: resourceDirs.join(','), worker: workerId() });
    // Token names only, never hashes or tokens (ADR 0140).
    if (config.tokens.length > 0)
      log.info('caller tokens required', { tokens: config.tokens.map((t) => t.name).join(',') });
    else log.warn('no caller tokens configured; every operation is open', { address });
  });
  server.on('error', (err: NodeJS.ErrnoException) => {
    if (!server.listening)
      fatal(
        'PACKAGER_LISTEN_FAILED',
        `cannot listen on ${config.bindAddress}:${config.port} (${err.code ?? 'error'})`,
      );
    log.error('server error', { error: err.name, cause: err.message });
    process.exit(1);
  });
  const drain = (signal: string) => {
    readiness.set('draining');
    log.info('shutting down', { signal });
    // Stop accepting; every request received is answered, replies from now on say `Connection: close`;
    // connections close after their reply or once quiet; whatever is left after PACKAGER_SHUTDOWN_TIMEOUT_MS is
    // cut (@org/http-drain; README, "Shutdown and timeouts").
    void closeGracefully(server, config.timeouts.shutdownMs).then((drained) => {
      if (!drained)
        log.warn('drain timeout; closed remaining connections', { ms: config.timeouts.shutdownMs });
      log.info('stopped', { drained });
      process.exit(0);
    });
  };
  process.once('SIGTERM', () => drain('SIGTERM'));
  process.once('SIGINT', () => drain('SIGINT'));
}

const args = parseArgs(process.argv.slice(2), appVersion(import.meta.url));
if (args.kind === 'print') {
  process.stdout.write(args.text);
  process.exit(0);
}
if (args.kind === 'usage-error') {
  // The argument itself is not echoed: it is whatever the caller typed.
  process.stderr.write(
    startupFailureLine('PACKAGER_USAGE', 'the packager takes no arguments besides --help and --version'),
  );
  process.exit(EXIT_USAGE);
}
try {
  const config = loadConfig(process.env);
  const log = createLogger(sink, undefined, config.logLevel);
  if (isClusterPrimary(config.workers)) runPrimary(config.workers, config.timeouts.shutdownMs, log);
  else start(config, prepareResourceDirs(config, log, process.cwd()), log);
} catch (err) {
  if (err instanceof ConfigError) fatal('PACKAGER_CONFIG_INVALID', err.message);
  fatal(
    'PACKAGER_START_FAILED',
    `the packager could not start (${err instanceof Error ? err.name : typeof err})`,
  );
}
