import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { AgentError } from '../errors.js';
import type { Output } from '../output.js';
import type { HttpRunCounters } from '../http/http-runs.js';
import type { TriggerRoute } from '../http/routes.js';
import type { RunTracker } from '../http/run-tracker.js';
import { splitTarget } from '../http/step-input.js';
import type { AssetArchive, AssetEntry } from './archive.js';
import { assetEntryNameOf } from './names.js';

/** What serving one `httpFile` request needs (a trigger server's context). */
export interface AssetContext {
  readonly assets?: AssetArchive | undefined;
  readonly output: Output;
  readonly tracker: RunTracker;
  readonly runs?: HttpRunCounters | undefined;
}

/** RFC 9110 §13.1.2: weak comparison; `*` matches any current representation. */
export function matchesIfNoneMatch(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((tag) => {
    const t = tag.trim();
    return (t.startsWith('W/') ? t.slice(2) : t) === etag;
  });
}

const methodNotAllowed = () =>
  Object.assign(new AgentError('AGENT_METHOD_NOT_ALLOWED', 'an httpFile step answers GET and HEAD only'), {
    headers: { allow: 'GET, HEAD' },
  });

/** The entry a request names, or the 404/400/405 error. */
function entryFor(archive: AssetArchive, route: TriggerRoute, req: IncomingMessage): AssetEntry {
  const method = (req.method ?? 'GET').toUpperCase();
  if (method !== 'GET' && method !== 'HEAD') throw methodNotAllowed();
  const name = assetEntryNameOf(splitTarget(req.url).path, route.file?.prefix ?? '/');
  const entry = archive.get(name);
  if (entry === undefined) throw new AgentError('AGENT_ASSET_NOT_FOUND', 'no packaged asset at this path');
  return entry;
}

/**
 * Pipes the body into the response; resolves when the response finished or the client went away (the body
 * is then destroyed: not the archive's fault), rejects with the body's error. Plain `pipe`: `stream.pipeline`
 * costs an AbortController and a DOMException per response.
 */
function streamTo(body: Readable, res: ServerResponse): Promise<void> {
  return new Promise((resolve, reject) => {
    body.once('error', reject);
    res.once('close', () => {
      if (!res.writableFinished) body.destroy();
      resolve();
    });
    body.pipe(res);
  });
}

async function answer(archive: AssetArchive, entry: AssetEntry, req: IncomingMessage, res: ServerResponse) {
  const headers = {
    etag: entry.etag,
    'cache-control': 'no-cache',
    'x-content-type-options': 'nosniff',
  };
  if (matchesIfNoneMatch(req.headers['if-none-match'], entry.etag)) {
    res.writeHead(304, headers).end();
    return;
  }
  // Read (or open the stream) first: a failure before the headers is a clean 500.
  const body: Buffer | Readable | undefined = req.method === 'HEAD' ? undefined : await archive.read(entry);
  res.writeHead(200, { ...headers, 'content-type': entry.contentType, 'content-length': entry.size });
  if (body === undefined || Buffer.isBuffer(body)) res.end(body);
  else await streamTo(body, res);
}

/**
 * Answers one request routed to an `httpFile` step from the server's packaged asset zip (ADR 0077): GET and
 * HEAD, `ETag` / `If-None-Match` (304), content type from the name, the body streamed from the zip. A read that
 * fails after the headers were sent is logged and the connection is closed (the length is then short).
 * @throws {@link AgentError} `AGENT_METHOD_NOT_ALLOWED` (405), `AGENT_ASSET_PATH_INVALID` (400),
 *   `AGENT_ASSET_NOT_FOUND` (404), `AGENT_STEP_FAILED` (500: the archive is closed or cannot be read).
 */
export async function serveAsset(
  ctx: AssetContext,
  route: TriggerRoute,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const archive = ctx.assets;
  if (archive === undefined || archive.closed) throw new AgentError('AGENT_STEP_FAILED', 'the step failed');
  const entry = entryFor(archive, route, req);
  const done = ctx.runs?.start(route.deploymentId, route.stepId);
  let failed = false;
  try {
    await ctx.tracker.track(() => answer(archive, entry, req, res));
  } catch (err) {
    failed = true;
    const fields = { deploymentId: route.deploymentId, stepId: route.stepId };
    ctx.output.error('asset read failed', {
      ...fields,
      error: err instanceof Error ? err.message.slice(0, 200) : 'error',
    });
    if (!res.headersSent) throw new AgentError('AGENT_STEP_FAILED', 'the step failed', { cause: err });
    res.destroy();
  } finally {
    done?.(failed);
  }
}
