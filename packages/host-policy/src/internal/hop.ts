import type { ClientRequest, IncomingMessage, RequestOptions } from 'node:http';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction as NetLookup } from 'node:net';
import type { CompiledHost } from '../compile.js';
import { PolicyError } from '../errors.js';
import type { ResolvedAddress } from './resolve.js';
import { asError } from './resolve.js';

/** One request to one checked address. */
export interface Hop {
  readonly host: CompiledHost;
  readonly address: ResolvedAddress;
  readonly method: string;
  /** Pathname plus query, exactly as decided. */
  readonly target: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Uint8Array | undefined;
  readonly connectTimeoutMs: number;
  readonly maxResponseBytes: number;
  /** Aborted on the total timeout or by the caller; its reason is what the hop rejects with. */
  readonly signal: AbortSignal;
}

/** A response as read by one hop. Redirect bodies are not read. */
export interface HopResponse {
  readonly status: number;
  readonly headers: Record<string, string[]>;
  readonly body: Uint8Array;
}

/** Redirect statuses: their body is not read here, and `sendOutbound` decides whether to follow them. */
export const REDIRECT_STATUSES: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);

/** A lookup for `http.request` that always answers the already-checked address (no second DNS query, S40). */
function pinnedLookup(a: ResolvedAddress): NetLookup {
  return ((_h: string, opts: { all?: boolean }, cb: (...args: unknown[]) => void) => {
    if (opts?.all === true) cb(null, [{ address: a.address, family: a.family }]);
    else cb(null, a.address, a.family);
  }) as unknown as NetLookup;
}

function requestOptions(hop: Hop): RequestOptions & { servername?: string } {
  const base = hop.host.base!;
  const bare = base.hostname.startsWith('[') ? base.hostname.slice(1, -1) : base.hostname;
  const headers: Record<string, string> = { ...hop.headers };
  if (hop.body !== undefined) headers['content-length'] = String(hop.body.byteLength);
  return {
    protocol: base.protocol,
    hostname: bare, // Host header and SNI stay the configured name
    port: base.port,
    method: hop.method,
    path: hop.target,
    headers,
    agent: false,
    lookup: pinnedLookup(hop.address),
    ...(base.protocol === 'https:' && base.literalKind === undefined ? { servername: bare } : {}),
  };
}

function fail(
  host: CompiledHost,
  code: 'POLICY_CONNECT_FAILED' | 'POLICY_TIMEOUT' | 'POLICY_RESPONSE_TOO_LARGE',
  rule: string,
  message: string,
  cause?: unknown,
) {
  return new PolicyError(code, `host ${host.id}: ${message}`, { cause, details: { hostId: host.id, rule } });
}

function readBody(
  hop: Hop,
  res: IncomingMessage,
  done: (r: HopResponse) => void,
  abortWith: (e: Error) => void,
) {
  const declared = Number(res.headers['content-length']);
  const tooLarge = () =>
    fail(
      hop.host,
      'POLICY_RESPONSE_TOO_LARGE',
      'response-size',
      `response is larger than ${hop.maxResponseBytes} bytes`,
    );
  if (declared > hop.maxResponseBytes) return abortWith(tooLarge());
  const chunks: Uint8Array[] = [];
  let size = 0;
  res.on('data', (chunk: Uint8Array) => {
    size += chunk.byteLength;
    if (size > hop.maxResponseBytes) return abortWith(tooLarge()); // SPEC.md §9: bounded memory (S43)
    chunks.push(chunk);
  });
  res.on('end', () => done(toResponse(res, concat(chunks, size))));
  res.on('close', () => {
    if (!res.complete)
      abortWith(fail(hop.host, 'POLICY_CONNECT_FAILED', 'response-incomplete', 'the response ended early'));
  });
}

/** Copies the chunks into one fresh buffer: never a view of Node's shared Buffer pool, whose other bytes a
 * caller could reach through `.buffer`. */
function concat(chunks: readonly Uint8Array[], size: number): Uint8Array {
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}

function toResponse(res: IncomingMessage, body: Uint8Array): HopResponse {
  const headers: Record<string, string[]> = Object.create(null) as Record<string, string[]>;
  for (const [k, v] of Object.entries(res.headersDistinct)) if (v !== undefined) headers[k] = v;
  return {
    status: res.statusCode ?? 0,
    headers,
    body,
  };
}

function armConnectTimeout(hop: Hop, req: ClientRequest) {
  req.once('socket', (socket) => {
    if (!socket.connecting) return;
    const timer = setTimeout(
      () =>
        req.destroy(
          fail(
            hop.host,
            'POLICY_TIMEOUT',
            'connect-timeout',
            `connect took longer than ${hop.connectTimeoutMs} ms`,
          ),
        ),
      hop.connectTimeoutMs,
    );
    socket.once('connect', () => clearTimeout(timer));
    socket.once('close', () => clearTimeout(timer));
  });
}

/**
 * Sends one request to the checked address and reads the response under the byte cap. Every failure rejects
 * with a PolicyError (or the caller's abort reason).
 */
export function sendHop(hop: Hop): Promise<HopResponse> {
  return new Promise<HopResponse>((resolve, reject) => {
    let settled = false;
    const settle = (fn: () => void) => {
      if (settled) return;
      settled = true;
      hop.signal.removeEventListener('abort', onAbort);
      fn();
    };
    const onError = (err: unknown) => {
      const reason: unknown = hop.signal.aborted ? hop.signal.reason : err;
      settle(() =>
        reject(
          reason instanceof PolicyError || hop.signal.aborted
            ? asError(reason)
            : fail(hop.host, 'POLICY_CONNECT_FAILED', 'connect', 'the connection failed', err),
        ),
      );
    };
    const send = hop.host.base!.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = send(requestOptions(hop), (res) => {
      res.on('error', onError);
      const done = (r: HopResponse) => settle(() => resolve(r));
      if (REDIRECT_STATUSES.has(res.statusCode ?? 0) && res.headers.location !== undefined) {
        done(toResponse(res, new Uint8Array(0)));
        req.destroy();
        return;
      }
      readBody(hop, res, done, (e) => {
        settle(() => reject(hop.signal.aborted ? asError(hop.signal.reason) : e));
        req.destroy();
      });
    });
    const onAbort = () => req.destroy(asError(hop.signal.reason));
    if (hop.signal.aborted) onAbort();
    else hop.signal.addEventListener('abort', onAbort, { once: true });
    req.on('error', onError);
    armConnectTimeout(hop, req);
    req.end(hop.body);
  });
}
