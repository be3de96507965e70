import { connect, type Socket } from 'node:net';

/** One raw HTTP/1.1 connection (to check keep-alive and draining): write bytes, read one whole response at a time (by content-length). */
export class RawClient {
  private buf = '';
  private waiters: (() => void)[] = [];
  ended = false;
  private constructor(private readonly socket: Socket) {
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => {
      this.buf += d;
      this.wake();
    });
    socket.on('close', () => {
      this.ended = true;
      this.wake();
    });
    socket.on('error', () => undefined);
  }
  static async open(port: number): Promise<RawClient> {
    const socket = connect(port, '127.0.0.1');
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    return new RawClient(socket);
  }
  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }
  write(text: string): void {
    this.socket.write(text);
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
