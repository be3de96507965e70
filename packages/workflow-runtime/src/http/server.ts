import { createServer, type IncomingMessage, type Server } from 'node:http';
import { acceptedMediaTypes, createCheckContinueListener } from '@org/multipart-limits';
import express from 'express';
import type { Limits, Timeouts } from '../limits.js';
import { errorMiddleware, writeError } from '../http-errors.js';
import type { Output } from '../output.js';
import type { TriggerRoute } from './routes.js';
import type { RunTracker } from './run-tracker.js';
import type { HttpRunCounters } from './http-runs.js';
import type { AssetArchive } from '../assets/archive.js';
import { routeFor, triggerHandler, uploadOptionsOf, type TriggerContext } from './trigger-handler.js';

/** What one trigger server needs. */
export interface TriggerServerOptions {
  readonly routes: readonly TriggerRoute[];
  readonly limits: Limits;
  readonly timeouts: Timeouts;
  readonly output: Output;
  readonly tracker: RunTracker;
  readonly runs?: HttpRunCounters | undefined;
  /** The packaged asset zip of this server (`serveFromPackagedAsset`). */
  readonly assets?: AssetArchive | undefined;
}

/** The Express app of one `allowHttpServerAccess` entry: one catch-all trigger handler, one error middleware. */
export function createTriggerApp(ctx: TriggerContext): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.use(triggerHandler(ctx));
  app.use(errorMiddleware(ctx.output));
  return app;
}

function acceptPostFor(ctx: TriggerContext, req: IncomingMessage): string | undefined {
  try {
    return acceptedMediaTypes(uploadOptionsOf(routeFor(ctx, req), ctx.limits));
  } catch {
    return undefined;
  }
}

/**
 * A node:http server for one trigger server (not listening). `checkContinue` is answered by
 * multipart-limits so an over-limit upload is refused before `100 Continue` (S8); header and request
 * timeouts bound slow clients.
 */
export function createTriggerServer(options: TriggerServerOptions): Server {
  const ctx: TriggerContext = options;
  const app = createTriggerApp(ctx);
  const server = createServer(
    { headersTimeout: options.timeouts.headersMs, requestTimeout: options.timeouts.requestMs },
    app,
  );
  server.on(
    'checkContinue',
    createCheckContinueListener({
      optionsFor: (req) => {
        try {
          return uploadOptionsOf(routeFor(ctx, req), options.limits);
        } catch {
          return undefined; // 404/405 is answered by the app
        }
      },
      onRejected: (err, req, res) => writeError(req, res, err, ctx.output, acceptPostFor(ctx, req)),
      onRequest: app,
    }),
  );
  return server;
}
