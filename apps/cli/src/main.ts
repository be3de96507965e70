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

process.exitCode = await run(process.argv.slice(2));
