import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fakeHost, type FakeHost, type FakeHostOptions } from './fake-host.js';

/** One request a loopback server got; `aborted` turns true when the client went away before the answer. */
export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
  aborted: boolean;
}

export interface LoopbackServer {
  url: string;
  seen: SeenRequest[];
  close(): Promise<void>;
}

/**
 * A real HTTP server on 127.0.0.1, port 0. `answer` writes the response; it may also never answer (a slow
 * upstream). Open connections are dropped on close.
 */
export async function startLoopback(
  answer: (req: SeenRequest, res: ServerResponse) => void,
): Promise<LoopbackServer> {
  const seen: SeenRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r: SeenRequest = {
        method: req.method!,
        url: req.url!,
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
        aborted: false,
      };
      seen.push(r);
      res.on('close', () => (r.aborted ||= !res.writableFinished));
      answer(r, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/**
 * A {@link FakeHost} whose outbound calls go over real HTTP (global fetch) to `bases[hostId] + path`, with the
 * request's abort signal; a refused host id or a failed connection is a coded error as the app throws it.
 */
export function loopbackHost(bases: Record<string, string>, options: FakeHostOptions = {}): FakeHost {
  return fakeHost({
    ...options,
    async respond(req) {
      const base = bases[req.hostId];
      if (base === undefined)
        throw Object.assign(new Error(`host ${req.hostId} is not declared`), { code: 'POLICY_HOST_UNKNOWN' });
      const path = req.path.startsWith('/') ? req.path : `/${req.path}`;
      let res: Response;
      try {
        res = await fetch(base + path, {
          method: req.method,
          headers: req.headers,
          ...(req.body === undefined ? {} : { body: req.body }),
          ...(req.signal ? { signal: req.signal } : {}),
        });
      } catch (err) {
        if (req.signal?.aborted) throw req.signal.reason as Error;
        throw Object.assign(new Error(`call to host ${req.hostId} failed`), {
          code: 'POLICY_CONNECT_FAILED',
          cause: err,
        });
      }
      const headers: Record<string, string[]> = {};
      res.headers.forEach((v, k) => (headers[k] = [v]));
      return { status: res.status, headers, body: new Uint8Array(await res.arrayBuffer()) };
    },
  });
}

/** Waits until `predicate` holds (polling), or fails after `ms`. */
export async function until(predicate: () => boolean, ms = 3000): Promise<void> {
  const end = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}
