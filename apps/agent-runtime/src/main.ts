import { prewarmSandbox } from '@org/workflow-engine/prewarm';
import { appVersion, EXIT_USAGE, flagIsOff, parseArgs } from './startup/args.js';

// The entry point: it reads the arguments and starts the sandbox with only these light modules loaded, then
// imports the rest of the agent (ADR 0149).
const args = parseArgs(process.argv.slice(2), appVersion(import.meta.url));
if (args.kind === 'print') {
  process.stdout.write(args.text);
  process.exit(0);
}
if (args.kind === 'usage-error') {
  const msg = 'unknown option: the agent takes a bootstrap, --help or --version';
  process.stderr.write(
    JSON.stringify({ ts: new Date().toISOString(), level: 'fatal', code: 'AGENT_USAGE', msg }) + '\n',
  );
  process.exit(EXIT_USAGE);
}
/**
 * The first sandbox worker starts now, on its own thread, while the agent loads its modules and reads its
 * bootstrap, so the first script step does not wait for it. `AGENT_OPTIMIZE_FOR_SIZE` is a V8 flag the agent sets
 * once its configuration is read, before any sandbox worker starts (ADR 0119): with it the worker starts then.
 */
if (flagIsOff(process.env['AGENT_OPTIMIZE_FOR_SIZE'])) prewarmSandbox();
const { run } = await import('./start.js');
await run(args.args);
