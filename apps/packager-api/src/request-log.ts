import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';
import type { Logger } from './logger.js';

/**
 * Gives every request an id (`X-Request-Id`, problem `instance`) and logs one line when it ends: method, path
 * (without the query: key-gen's is harmless, but no query is ever logged), status, duration, and the request's
 * content type and length. Never bodies, other headers or key material.
 */
export function requestLog(log: Logger): RequestHandler {
  return (req, res, next) => {
    const reqId = randomUUID();
    const start = process.hrtime.bigint();
    res.locals['requestId'] = reqId;
    res.setHeader('X-Request-Id', reqId);
    // API answers are never to be sniffed into something a browser would render.
    res.setHeader('X-Content-Type-Options', 'nosniff');
    let logged = false;
    const done = () => {
      if (logged) return;
      logged = true;
      const ms = Number(process.hrtime.bigint() - start) / 1e6;
      log.info('request', {
        reqId,
        method: req.method,
        path: req.path,
        status: res.headersSent ? res.statusCode : 0,
        ms: Math.round(ms * 100) / 100,
        contentType: req.headers['content-type'],
        contentLength: req.headers['content-length'],
        aborted: !res.writableFinished,
      });
    };
    // A response emits `close` after `finish`, and also when the connection goes first: one listener for both.
    res.once('close', done);
    next();
  };
}
