// Child processes of the bench scripts: a server started with `node <args>` until it logs "listening", and the CPU
// time a process has used (Linux /proc).
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** Linux's USER_HZ, the unit of /proc/<pid>/stat times. */
const CLOCK_TICKS = 100;

/** Starts `node <args>` with `env` added and resolves with the port of its "listening" log line. */
export function startChild(
  args: string[],
  env: Record<string, string>,
): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, args, {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let buffered = '';
    let found = false;
    child.stdout.on('data', (d: Buffer) => {
      if (found) return; // keep draining the pipe (request log lines), nothing more
      buffered += d.toString();
      const line = buffered.split('\n').find((l) => l.includes('"listening"'));
      if (line === undefined) return;
      found = true;
      resolve({ child, port: (JSON.parse(line) as { port: number }).port });
    });
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code}`)));
  });
}

/** User + system CPU seconds a process has used so far (Linux /proc; NaN elsewhere). */
export function cpuSeconds(pid: number | undefined): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return Number.NaN;
  }
}
