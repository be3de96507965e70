import { request, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { duplexPair } from 'node:stream';
import { PolicyError } from '@org/host-policy';
import type { OutboundResponse } from '@org/workflow-engine';

/** One in-process HTTP request: what the host policy decided (path and query, method, merged headers). */
export interface InProcRequest {
  /** Path and query, as the host policy composed them for an `inProc` host. */
  readonly path: string;
  readonly method: string;
  /** Merged headers, lower-case names. Holds secrets: never log it. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Uint8Array | string | undefined;
}

/** Bounds of one exchange, and who calls (set on the server side of the connection, never read from headers). */
export interface InProcOptions {
  readonly callerId: string;
  readonly timeoutMs: number;
  readonly maxResponseBytes: number;
}

const CALLER = Symbol('inProcCaller');

/** The deployment that opened an in-process connection, or undefined for a network connection. */
export function inProcCallerOf(socket: Socket | undefined): string | undefined {
  const v = (socket as unknown as Record<symbol, unknown> | undefined)?.[CALLER];
  return typeof v === 'string' ? v : undefined;
}

function bytesOf(body: Uint8Array | string | undefined): Buffer {
  if (body === undefined) return Buffer.alloc(0);
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
}

/**
 * Sends one HTTP request to a trigger server without a network port: the two ends of an in-memory stream pair
 * are the client's connection and a connection handed to the server (`'connection'` event), so the request
 * goes through the same parser, limits, routes and handler as one from the network. The server need not
 * listen (`inProcOnly`).
 * @throws PolicyError `POLICY_TIMEOUT` (after `timeoutMs`), `POLICY_RESPONSE_TOO_LARGE`,
 *   `POLICY_CONNECT_FAILED`.
 */
export function exchangeInProc(
  server: Server,
  req: InProcRequest,
  o: InProcOptions,
): Promise<OutboundResponse> {
  const [client, serverSide] = duplexPair();
  Object.defineProperty(serverSide, CALLER, { value: o.callerId });
  const body = bytesOf(req.body);
  return new Promise<OutboundResponse>((resolve, reject) => {
    let settled = false;
    const finish = (err: PolicyError | undefined, res?: OutboundResponse) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      client.destroy();
      serverSide.destroy();
      if (err) reject(err);
      else resolve(res!);
    };
    const timer = setTimeout(
      () => finish(new PolicyError('POLICY_TIMEOUT', `in-process call timed out after ${o.timeoutMs} ms`)),
      o.timeoutMs,
    );
    const failed = () => finish(new PolicyError('POLICY_CONNECT_FAILED', 'in-process call failed'));
    try {
      const r = request(
        {
          method: req.method,
          path: req.path,
          headers: { ...req.headers, host: 'in-process', 'content-length': String(body.length) },
          createConnection: () => client,
        },
        (res) => {
          const chunks: Buffer[] = [];
          let total = 0;
          res.on('data', (c: Buffer) => {
            total += c.length;
            if (total <= o.maxResponseBytes) chunks.push(c);
            else
              finish(
                new PolicyError(
                  'POLICY_RESPONSE_TOO_LARGE',
                  `in-process response body over ${o.maxResponseBytes} bytes`,
                ),
              );
          });
          res.on('error', failed);
          res.on('end', () => {
            const headers = Object.create(null) as Record<string, string[]>; // __proto__ stays a header
            for (const [k, v] of Object.entries(res.headersDistinct)) if (v !== undefined) headers[k] = v;
            finish(undefined, {
              status: res.statusCode ?? 0,
              headers,
              body: new Uint8Array(Buffer.concat(chunks)),
            });
          });
        },
      );
      r.on('error', failed);
      server.emit('connection', serverSide);
      r.end(body);
    } catch {
      failed();
    }
  });
}
