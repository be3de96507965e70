import { connect, type Socket } from 'node:net';

/** A response read off a raw connection. */
export interface RawResponse {
  status: number;
  /** The status lines of the interim (1xx) responses before it, such as `HTTP/1.1 100 Continue`. */
  interim: string[];
  /** Lower-case names. */
  headers: Record<string, string>;
  /** Latin-1: byte for byte. */
  body: string;
}

/**
 * The first final (not 1xx) response in raw `text`, once complete: its whole Content-Length, or, when `closed`,
 * everything after its headers. Undefined while it is incomplete.
 */
export function parseFinalResponse(text: string, closed = false): RawResponse | undefined {
  const interim: string[] = [];
  let at = 0;
  for (;;) {
    const end = text.indexOf('\r\n\r\n', at);
    if (end < 0) return undefined;
    const [line = '', ...fields] = text.slice(at, end).split('\r\n');
    const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(line)?.[1] ?? 0);
    at = end + 4;
    if (status >= 100 && status < 200) {
      interim.push(line);
      continue;
    }
    const headers: Record<string, string> = {};
    for (const f of fields) {
      const colon = f.indexOf(':');
      headers[f.slice(0, colon).trim().toLowerCase()] = f.slice(colon + 1).trim();
    }
    const length = headers['content-length'] === undefined ? undefined : Number(headers['content-length']);
    const rest = text.slice(at);
    if (length !== undefined && rest.length >= length)
      return { status, interim, headers, body: rest.slice(0, length) };
    return closed ? { status, interim, headers, body: rest } : undefined;
  }
}

/**
 * One raw HTTP/1.1 connection: write bytes; read one whole response at a time (keep-alive, draining), or look at
 * everything the server wrote (`received`, `until`, `final`: interim responses such as `100 Continue`).
 */
export class RawClient {
  /** What `response()` has not consumed yet. */
  private buf = '';
  private all = '';
  private waiters: (() => void)[] = [];
  ended = false;
  private constructor(readonly socket: Socket) {
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => {
      this.buf += d;
      this.all += d;
      this.wake();
    });
    socket.on('close', () => {
      this.ended = true;
      this.wake();
    });
    socket.on('error', () => undefined);
  }
  /** Connects to 127.0.0.1 on `port`, or on the port of a base URL. */
  static async open(port: number | string): Promise<RawClient> {
    const socket = connect(typeof port === 'number' ? port : Number(new URL(port).port), '127.0.0.1');
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    return new RawClient(socket);
  }
  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }
  write(data: string | Uint8Array): void {
    this.socket.write(data);
  }
  /** Writes and resolves once the bytes are handed to the system. */
  send(data: string | Uint8Array): Promise<void> {
    return new Promise((resolve, reject) =>
      this.socket.write(data, (err) => (err ? reject(err) : resolve())),
    );
  }
  /** Everything the server wrote so far (Latin-1). */
  get received(): string {
    return this.all;
  }
  /** Waits until `done(received)` holds or the server has closed the connection. */
  async until(done: (text: string) => boolean): Promise<void> {
    while (!done(this.all) && !this.ended) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }
  /**
   * The first final (not 1xx) response of the connection, with the interim status lines before it; its body read
   * to its Content-Length or to the close of the connection. Status 0 when the server closed before one.
   */
  async final(): Promise<RawResponse> {
    await this.until((t) => parseFinalResponse(t) !== undefined);
    return (
      parseFinalResponse(this.all) ??
      parseFinalResponse(this.all, true) ?? { status: 0, interim: [], headers: {}, body: '' }
    );
  }
  /** The next response: status, lower-cased headers, body text. */
  async response(): Promise<{ status: number; headers: Record<string, string>; body: string }> {
    for (;;) {
      const end = this.buf.indexOf('\r\n\r\n');
      if (end >= 0) {
        const [statusLine = '', ...lines] = this.buf.slice(0, end).split('\r\n');
        const headers: Record<string, string> = {};
        for (const l of lines) {
          const i = l.indexOf(':');
          headers[l.slice(0, i).toLowerCase()] = l.slice(i + 1).trim();
        }
        const length = Number(headers['content-length'] ?? '0');
        if (this.buf.length >= end + 4 + length) {
          const body = this.buf.slice(end + 4, end + 4 + length);
          this.buf = this.buf.slice(end + 4 + length);
          return { status: Number(statusLine.split(' ')[1]), headers, body };
        }
      }
      if (this.ended) throw new Error('connection closed before a whole response');
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }
  /** Resolves when the server has closed the connection. */
  async closed(): Promise<void> {
    while (!this.ended) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }
  destroy(): void {
    this.socket.destroy();
  }
}

/** Response headers without those of the connection (`connection`, `keep-alive`) and the clock (`date`). */
export function answerHeaders(h: Record<string, string>): Record<string, string> {
  const { connection: _c, 'keep-alive': _k, date: _d, ...rest } = h;
  return rest;
}

/**
 * The answer a request sent whole (with `fetch`, no `Expect`) gets, in the shape of a {@link RawResponse} read off a
 * raw connection: to check that a refusal from the headers alone is byte for byte the answer the whole request gets.
 */
export async function wholeAnswer(
  url: string,
  body: Uint8Array,
  headers: Record<string, string>,
): Promise<RawResponse> {
  const res = await fetch(url, { method: 'POST', body, headers });
  const got: Record<string, string> = {};
  res.headers.forEach((v, k) => (got[k] = v));
  return {
    status: res.status,
    interim: [],
    headers: got,
    body: Buffer.from(await res.arrayBuffer()).toString('latin1'),
  };
}
