import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createCheckContinueListener, type UploadError } from '@org/multipart-limits';
import type express from 'express';
import type { Limits, Timeouts } from './config.js';
import type { Logger } from './logger.js';
import { writeProblem } from '@org/http-problem';
import { problemBody } from './http-errors.js';
import { uploadOptionsByPath } from './upload.js';

/**
 * Refuses an upload from its headers alone (`Expect: 100-continue`, S8): no `100 Continue`, nothing read,
 * `Connection: close` (already set by the listener). Runs outside Express, so it writes the problem itself.
 */
function refuser(log: Logger) {
  return (error: UploadError, req: IncomingMessage, res: ServerResponse): void => {
    const reqId = randomUUID();
    const body = problemBody(error, reqId);
    const { status } = body;
    writeProblem(req, res, body, { connection: 'close' });
    log.info('request', {
      reqId,
      method: req.method,
      path: (req.url ?? '').split('?')[0],
      status,
      ms: 0,
      refusedBeforeBody: true,
    });
  };
}

/**
 * The HTTP server around the app: the multipart-limits `checkContinue` listener and explicit timeouts
 * (headers, whole request, keep-alive). Listening is the caller's job.
 */
export function createHttpServer(
  app: express.Express,
  limits: Limits,
  timeouts: Timeouts,
  log: Logger,
): Server {
  const uploads = uploadOptionsByPath(limits);
  const server = createServer(app);
  server.on(
    'checkContinue',
    createCheckContinueListener({
      optionsFor: (req) => uploads.get((req.url ?? '').split('?')[0] ?? ''),
      onRejected: refuser(log),
      onRequest: app,
    }),
  );
  server.headersTimeout = timeouts.headersMs;
  server.requestTimeout = timeouts.requestMs;
  server.keepAliveTimeout = timeouts.keepAliveMs;
  return server;
}
