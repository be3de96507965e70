// What the agent's benchmarks share: servers in child processes, a multipart upload streamed from one reused 1 MiB chunk,
// and a process's resident memory (Linux /proc).
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';

const MiB = 1024 * 1024;
const BOUNDARY = 'benchBoundary7MA4YWxkTrZu0gW';
const HEAD = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="body"\r\n\r\n{"ref":"bench"}\r\n--${BOUNDARY}\r\nContent-Disposition: form-data; name="stream"; filename="f"\r\nContent-Type: application/octet-stream\r\n\r\n`;
const TAIL = `\r\n--${BOUNDARY}--\r\n`;

/** Streams a multipart upload of `total` bytes from one reused 1 MiB chunk; returns MiB/s and the reply. */
export function uploadMultipart(
  port: number,
  path: string,
  total: number,
): Promise<{ mibs: number; reply: string }> {
  const chunk = Buffer.alloc(MiB, 0x61);
  const length = Buffer.byteLength(HEAD) + total + Buffer.byteLength(TAIL);
  const started = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const req = request(
      {
        port,
        path,
        method: 'POST',
        headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}`, 'content-length': length },
      },
      (res) => {
        let reply = '';
        res.on('data', (d: Buffer) => (reply += d.toString()));
        res.on('end', () => {
          const s = Number(process.hrtime.bigint() - started) / 1e9;
          resolve({ mibs: total / MiB / s, reply });
        });
      },
    );
    req.on('error', reject);
    req.write(HEAD);
    let sent = 0;
    const pump = () => {
      while (sent < total) {
        const n = Math.min(MiB, total - sent);
        sent += n;
        if (!req.write(n === MiB ? chunk : chunk.subarray(0, n))) return void req.once('drain', pump);
      }
      req.end(TAIL);
    };
    pump();
  });
}

/**
 * Starts a multipart upload announcing `total` bytes, sends `sent` of them, and resets the connection (an upload the
 * client gave up on). Resolves once the socket is closed.
 */
export function abortedUpload(port: number, path: string, total: number, sent: number): Promise<void> {
  const length = Buffer.byteLength(HEAD) + total + Buffer.byteLength(TAIL);
  return new Promise((resolve) => {
    const req = request({
      port,
      path,
      method: 'POST',
      headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}`, 'content-length': length },
    });
    req.on('error', () => undefined);
    req.on('close', () => resolve());
    req.write(HEAD);
    req.write(Buffer.alloc(sent, 0x61), () => setTimeout(() => req.destroy(), 2));
  });
}

/** Resident set size and its high-water mark of a process, in bytes (Linux /proc). */
export function memoryOf(pid: number): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)?.[1] ?? 0) * 1024;
  return { rss: kb('VmRSS'), hwm: kb('VmHWM') };
}

/** A server in a child process (so neither the client nor the load generator shares its event loop). */
export interface ChildServer {
  pid: number;
  port: number;
  stop(): void;
}

/**
 * Starts `node <args>` in `cwd` with only `PATH` and `env`, and resolves once a JSON line of its standard output gives
 * `portOf` a port. Later output is drained (written through with `echoStdout`).
 */
export function spawnChildServer(
  args: string[],
  env: Record<string, string>,
  portOf: (line: Record<string, unknown>) => number | undefined,
  cwd: string,
  echoStdout = false,
): Promise<ChildServer> {
  const child = spawn(process.execPath, args, {
    env: { PATH: process.env['PATH'] ?? '', ...env },
    cwd,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    let found = false;
    child.stdout.on('data', (d: Buffer) => {
      if (found) {
        if (echoStdout) process.stdout.write(d);
        return;
      }
      out += d.toString();
      const lines = out.split('\n');
      out = lines.pop() ?? '';
      for (const line of lines) {
        if (!line.startsWith('{')) continue;
        const port = portOf(JSON.parse(line) as Record<string, unknown>);
        if (port === undefined) continue;
        found = true;
        resolve({ pid: child.pid!, port, stop: () => child.kill('SIGTERM') });
        return;
      }
    });
    child.on('exit', (code) => reject(new Error(`server exited with ${code}`)));
  });
}
