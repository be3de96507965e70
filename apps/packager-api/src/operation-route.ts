import type { PackagerDirs, PackagerOperation, PackagerOperations, TokenCheck } from '@org/packager';
import type { RequestHandler } from 'express';
import { JSON_TYPE } from './negotiate.js';
import { sendBody, type TableHandler } from './plain-http.js';

/** The names of an operation's own headers as the service always wrote them. */
const WIRE_NAMES: Readonly<Record<string, string>> = { vary: 'Vary', 'cache-control': 'Cache-Control' };

/** The headers every answer of `operation` carries, as `[name, value]` pairs in the order they are set. */
function presetHeaders(ops: PackagerOperations, operation: PackagerOperation): [string, string][] {
  return Object.entries(ops.spec(operation).headers).map(([name, value]) => [
    WIRE_NAMES[name] ?? name,
    value,
  ]);
}

/**
 * The route of one operation (ADR 0138): its headers (`Vary`, key-gen's `Cache-Control`) are set first, so a
 * refusal carries them too; then the caller's token is checked when tokens are configured (ADR 0140: before any
 * of the body is read); then the request is read, run and written. A read or run error (coded or not) goes
 * to the error middleware, as every route's throw does; the request's keys and bytes are wiped whatever the
 * outcome.
 */
export function operationRoute(
  ops: PackagerOperations,
  operation: PackagerOperation,
  dirs: PackagerDirs,
  tokens?: TokenCheck,
): TableHandler {
  const preset = presetHeaders(ops, operation);
  return async (req, res) => {
    for (const [name, value] of preset) res.setHeader(name, value);
    tokens?.authorize(req.headers.authorization, operation);
    const read = await ops.read(operation, req, dirs);
    try {
      const result = await read.perform();
      sendBody(res, result.type, result.body, result.status);
    } finally {
      read.wipe();
    }
  };
}

/**
 * GET /key-gen: as {@link operationRoute}, with the answer sent through Express's `res.send` as it always was
 * (its conditional-GET and `HEAD` handling included), so this route keeps Express's request and response.
 */
export function keyGenRoute(
  ops: PackagerOperations,
  dirs: PackagerDirs,
  tokens?: TokenCheck,
): RequestHandler {
  const preset = presetHeaders(ops, 'key-gen');
  return async (req, res) => {
    for (const [name, value] of preset) res.setHeader(name, value);
    tokens?.authorize(req.headers.authorization, 'key-gen');
    const read = await ops.read('key-gen', req, dirs);
    try {
      const { body } = await read.perform();
      res.type(JSON_TYPE).send(typeof body === 'string' ? body : Buffer.from(body));
    } finally {
      read.wipe();
    }
  };
}
