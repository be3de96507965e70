import type { AddressInfo } from 'node:net';
import { createApp } from './app.js';
import { ConfigError, loadConfig, prepareResourceDirs, type Config } from './config.js';
import { createBatchingSink, createLogger, type Logger } from './logger.js';
import { closeGracefully, createHttpServer } from './server.js';

const sink = createBatchingSink((text) => process.stdout.write(text));
const log = createLogger(sink);
// Pending log lines are written before any exit (stdout to a file or pipe is synchronous on Linux).
process.on('exit', () => sink.flush());

function start(config: Config, resourceDirs: string[]): void {
  const app = createApp({ limits: config.limits, resourceDirs, log });
  const server = createHttpServer(app, config.limits, config.timeouts, log);
  server.listen(config.port, config.bindAddress, () => {
    const { port, address } = server.address() as AddressInfo;
    log.info('listening', { port, address, resourceDirs: resourceDirs.join(',') });
  });
  server.on('error', (err) => {
    log.error('server error', { error: err.name, cause: err.message });
    process.exit(1);
  });
  const drain = (signal: string) => {
    log.info('shutting down', { signal });
    // Stop accepting; replies from now on say `Connection: close`; idle connections close now, the others
    // after their reply; whatever is left after PACKAGER_SHUTDOWN_TIMEOUT_MS is cut (README, "Shutdown").
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

function fail(logger: Logger, err: unknown): never {
  if (err instanceof ConfigError) {
    logger.error('configuration refused', { cause: err.message });
    process.stderr.write(`packager-api: ${err.message}\n`);
  } else {
    logger.error('start failed', { error: err instanceof Error ? err.name : typeof err });
  }
  process.exit(1);
}

try {
  const config = loadConfig(process.env);
  start(config, prepareResourceDirs(config, log, process.cwd()));
} catch (err) {
  fail(log, err);
}
