import type { AddressInfo } from 'node:net';
import { createApp } from './app.js';
import { isClusterPrimary, runPrimary, workerId } from './cluster.js';
import { ConfigError, loadConfig, prepareResourceDirs, type Config } from './config.js';
import { createBatchingSink, createLogger, type Logger } from './logger.js';
import { createHttpServer } from './server.js';

const sink = createBatchingSink((text) => process.stdout.write(text));
const log = createLogger(sink);
// Pending log lines are written before any exit (stdout to a file or pipe is synchronous on Linux).
process.on('exit', () => sink.flush());

function start(config: Config, resourceDirs: string[]): void {
  const app = createApp({ limits: config.limits, resourceDirs, log });
  const server = createHttpServer(app, config.limits, config.timeouts, log);
  server.listen(config.port, config.bindAddress, () => {
    const { port, address } = server.address() as AddressInfo;
    log.info('listening', { port, address, resourceDirs: resourceDirs.join(','), worker: workerId() });
  });
  server.on('error', (err) => {
    log.error('server error', { error: err.name, cause: err.message });
    process.exit(1);
  });
  const drain = (signal: string) => {
    log.info('shutting down', { signal });
    // Stop accepting; idle keep-alive connections close now, in-flight requests may finish.
    server.close(() => {
      log.info('stopped');
      process.exit(0);
    });
    // Connections become idle as their in-flight requests finish: close them as they do.
    server.closeIdleConnections();
    setInterval(() => server.closeIdleConnections(), 100).unref();
    setTimeout(() => {
      log.warn('drain timeout; closing remaining connections', { ms: config.timeouts.shutdownMs });
      server.closeAllConnections();
    }, config.timeouts.shutdownMs).unref();
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
  if (isClusterPrimary(config.workers)) runPrimary(config.workers, config.timeouts.shutdownMs, log);
  else start(config, prepareResourceDirs(config, log, process.cwd()));
} catch (err) {
  fail(log, err);
}
