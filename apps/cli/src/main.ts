import { removePending, wipeLoadedKeys } from './cleanup.js';
import { run } from './cli.js';
import { EXIT_CLOSED_PIPE, EXIT_USAGE } from './errors.js';

/** Ends the process now: temporary output files removed, key bytes wiped (runs inside event handlers). */
function stop(status: number): never {
  removePending();
  wipeLoadedKeys();
  process.exit(status);
}

// Interrupted: remove every temporary output file, then exit with the conventional 128 + signal status.
for (const [signal, status] of [
  ['SIGINT', 130],
  ['SIGTERM', 143],
  ['SIGHUP', 129],
] as const) {
  process.on(signal, () => stop(status));
}

// A reader that closed the pipe early (`oapp … -o - | head -c 10`) is not a bug of ours: stop quietly with
// 141, as a tool killed by SIGPIPE would, and print nothing. This listener is registered before any write, so it
// runs before the rejection of a pending `once(stdout, 'drain')` could reach run() as CLI_INTERNAL.
// Any other failure of stdout (EIO, ENOSPC on a redirected file) is one coded line, never a stack trace.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') stop(EXIT_CLOSED_PIPE);
  process.stderr.write(`oapp: CLI_FILE_UNWRITABLE: standard output: ${err.code ?? 'write failed'}\n`);
  stop(EXIT_USAGE);
});
// With stderr gone there is nobody to tell: the same quiet stop.
process.stderr.on('error', () => stop(EXIT_CLOSED_PIPE));

const status = await run(process.argv.slice(2));
process.exitCode = status;
// Everything a command does is awaited before run() returns; what can still hold the process is V8's own
// background work, such as optimising the sandbox's WebAssembly after `oapp test` (100–300 ms, ADR 0149). Exit once
// standard output and error have handed on what was written (a pipe may be asynchronous on some platforms).
await Promise.all([flushed(process.stdout), flushed(process.stderr)]);
process.exit(status);

/** Resolves once everything written to `stream` before it has been handed to the operating system. */
function flushed(stream: NodeJS.WriteStream): Promise<void> {
  return new Promise((resolve) => stream.write('', () => resolve()));
}
