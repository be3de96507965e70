import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { emptyStream, type Upload } from '@org/multipart-limits';
import type { StepInput } from '@org/workflow-engine';
import { inProcCallerOf } from '../deployments/in-proc.js';

/** Run property names of the request line (ADR 0045; docs/interfaces.md §6.1). */
export const REQUEST_PROPERTIES = {
  method: 'http.method',
  path: 'http.path',
  query: 'http.query',
  uri: 'http.uri',
  /** Set only on a request from another step of this runtime (`inProc` host): the calling deployment. */
  inProcDeploymentId: 'http.inProcDeploymentId',
} as const;

/** Path and query as sent (percent-encoding kept), split at the first `?`. */
export function splitTarget(url: string | undefined): { path: string; query: string } {
  const target = url ?? '/';
  const q = target.indexOf('?');
  return q < 0 ? { path: target, query: '' } : { path: target.slice(0, q), query: target.slice(q + 1) };
}

function headersOf(req: IncomingMessage): Record<string, string[]> {
  const out = Object.create(null) as Record<string, string[]>; // a header named __proto__ stays a header
  for (const [name, values] of Object.entries(req.headersDistinct)) {
    if (values !== undefined) out[name] = values;
  }
  return out;
}

/**
 * The reference agent's request envelope (docs/interfaces.md §6.1; a deployment's
 * `referenceBehaviour.httpRequestEnvelope`): `{"uri", "method", "path", "query", "body"}` as JSON text, in that order.
 * `uri` is the request target as sent, `path` and `query` its two parts (percent-encoding kept, `query` without the
 * `?`, omitted when the target has none), `body` what `getBody()` would otherwise be (the JSON or text body, or the
 * multipart `body` part; `""` when there is none). The upload's bytes stay in `getStream()`.
 */
export function requestEnvelope(
  uri: string,
  method: string,
  path: string,
  query: string,
  body: string | undefined,
): string {
  const hasQuery = uri.includes('?');
  return JSON.stringify({ uri, method, path, ...(hasQuery ? { query } : {}), body: body ?? '' });
}

/**
 * What an HTTP-triggered step receives (docs/interfaces.md §6.1–6.2): `getBody()` is exactly the JSON or text
 * body or the multipart `body` part; octet-stream and the `stream` part go to `getStream()` (a form without
 * a `stream` part gives an empty reader, S18); the request line is in run properties.
 */
export function stepInputOf(req: IncomingMessage, upload: Upload, envelope = false): StepInput {
  const { path, query } = splitTarget(req.url);
  const method = (req.method ?? 'GET').toUpperCase();
  const uri = req.url ?? '/';
  let stream: Readable | undefined = upload.stream;
  if (upload.kind === 'multipart' && stream === undefined) stream = emptyStream();
  return {
    body: envelope ? requestEnvelope(uri, method, path, query, upload.body) : upload.body,
    stream,
    // A multipart `stream`'s chunks each own their ArrayBuffer (@org/multipart-limits SPEC §6): moved, not copied.
    streamTransferable: upload.kind === 'multipart' && upload.stream !== undefined,
    ...requestLineOf(req),
  };
}

/** The headers and the request-line run properties of a request (no body): what every HTTP-triggered run gets. */
export function requestLineOf(req: IncomingMessage): Pick<StepInput, 'headers' | 'properties'> {
  const { path, query } = splitTarget(req.url);
  // Identity from the runtime (the in-memory connection), never from a header (S148).
  const caller = inProcCallerOf(req.socket);
  return {
    headers: headersOf(req),
    properties: {
      [REQUEST_PROPERTIES.method]: (req.method ?? 'GET').toUpperCase(),
      [REQUEST_PROPERTIES.path]: path,
      [REQUEST_PROPERTIES.query]: query,
      [REQUEST_PROPERTIES.uri]: req.url ?? '/',
      ...(caller === undefined ? {} : { [REQUEST_PROPERTIES.inProcDeploymentId]: caller }),
    },
  };
}
