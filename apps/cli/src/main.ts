import { run } from './cli.js';
import { removePending } from './io.js';

// Interrupted: remove every temporary output file, then exit with the conventional 128 + signal status.
for (const [signal, status] of [
  ['SIGINT', 130],
  ['SIGTERM', 143],
  ['SIGHUP', 129],
] as const) {
  process.on(signal, () => {
    removePending();
    process.exit(status);
  });
}

process.exitCode = await run(process.argv.slice(2));
