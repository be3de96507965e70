import { Command, CommanderError, Option } from 'commander';
import { refuseKeysOnCommandLine } from './argv-guard.js';
import { removePending, wipeLoadedKeys } from './cleanup.js';
import { processContext, type Context } from './context.js';
import { describeError, EXIT_OK, EXIT_USAGE, exitCodeOf, oneLine } from './errors.js';
import { VERSION_TEXT } from './version.js';

export { VERSION } from './version.js';

type Done = (code: number) => void;
type Factory = (ctx: Context, done: Done) => Command;

/**
 * Every command, in the order of the help, with the module that defines it. A module is imported only when its
 * command may run or be described (issue 31): importing them all loads every library of the toolkit, which took
 * three quarters of `oapp --version`.
 */
const COMMANDS: readonly (readonly [name: string, load: () => Promise<Factory>])[] = [
  ['keygen', async () => (await import('./commands/keygen.js')).keygenCommand],
  ['package', async () => (await import('./commands/package.js')).packageCommand],
  ['inspect', async () => (await import('./commands/packages.js')).inspectCommand],
  ['verify', async () => (await import('./commands/packages.js')).verifyCommand],
  ['open', async () => (await import('./commands/packages.js')).openCommand],
  ['envelope', async () => (await import('./commands/packages.js')).envelopeCommand],
  ['encrypt-string', async () => (await import('./commands/encrypt.js')).encryptStringCommand],
  ['encrypt-bootstrap', async () => (await import('./commands/encrypt.js')).encryptBootstrapCommand],
  ['decrypt-bootstrap', async () => (await import('./commands/encrypt.js')).decryptBootstrapCommand],
  ['sign-bootstrap', async () => (await import('./commands/bootstrap-signature.js')).signBootstrapCommand],
  [
    'verify-bootstrap',
    async () => (await import('./commands/bootstrap-signature.js')).verifyBootstrapCommand,
  ],
  ['compile', async () => (await import('./commands/workflows.js')).compileCommand],
  ['hash', async () => (await import('./commands/workflows.js')).hashCommand],
  ['build', async () => (await import('./commands/workflows.js')).buildCommand],
  ['test', async () => (await import('./commands/test.js')).testCommand],
  ['version', async () => (await import('./commands/about.js')).versionCommand],
  ['completion', async () => (await import('./commands/about.js')).completionCommand],
  ['man', async () => (await import('./commands/about.js')).manCommand],
];

/** The version flags of the program; commander handles them before it looks at any command. */
const VERSION_FLAGS = new Set(['-V', '--version', '-v']);
/** Commands that describe the whole program, so need every command defined. */
const DESCRIBE_ALL = new Set(['help', 'completion', 'man']);

/**
 * The commands `args` can reach. Commander dispatches to the command named by the first operand; when that is
 * the first argument, no other command can run or be described (the program's help is shown only when nothing
 * was dispatched). When the first argument is a version flag, commander prints the version before anything else.
 * Every other case (help, no command, an unknown one, an option first) gets them all.
 */
function reachable(args: readonly string[]): readonly string[] | undefined {
  const first = args[0];
  if (first === undefined) return undefined;
  if (VERSION_FLAGS.has(first)) return [];
  if (DESCRIBE_ALL.has(first)) return undefined;
  return COMMANDS.some(([name]) => name === first) ? [first] : undefined;
}

/**
 * Builds the `oapp` program; `done` receives each command's exit status. With `only`, just those commands are
 * defined (see {@link reachable}); without it, all of them.
 */
export async function createProgram(ctx: Context, done: Done, only?: readonly string[]): Promise<Command> {
  const program = new Command('oapp')
    .description('Make, inspect, verify and open signed, encrypted .oapp workflow packages.')
    .version(VERSION_TEXT, '-V, --version', 'print the version (also -v, and oapp version)')
    // minisign's spelling: commander takes one short flag per option, so -v is a hidden twin that prints the
    // same text and ends the parse as --version does (below).
    .addOption(new Option('-v').hideHelp())
    .helpOption('-h, --help', 'show help')
    .helpCommand('help [command]', 'show help for a command')
    .exitOverride()
    .configureOutput({
      writeOut: (s) => void process.stdout.write(s),
      writeErr: (s) => void process.stderr.write(s),
      // Usage errors are printed once, in the `oapp: CODE: message` form, by run().
      outputError: () => undefined,
    })
    .addHelpText(
      'after',
      '\nExit status: 0 ok; 1 verification, decryption or validation failed, or a test failed; 2 usage error.\n' +
        'Keys come from files or env://NAME, never from the command line. See `oapp <command> --help`.',
    );
  const wanted = COMMANDS.filter(([name]) => only === undefined || only.includes(name));
  const factories = await Promise.all(wanted.map(([, load]) => load()));
  for (const make of factories) program.addCommand(make(ctx, done).copyInheritedSettings(program));
  program.on('option:v', () => {
    ctx.print(VERSION_TEXT);
    throw new CommanderError(0, 'commander.version', VERSION_TEXT);
  });
  return program;
}

function usageLine(err: CommanderError, args: readonly string[]): string {
  const names = new Set(COMMANDS.map(([name]) => name));
  const sub = args.find((a) => names.has(a));
  return `${oneLine(err.message.replace(/^error: /, ''))} (see oapp ${sub === undefined ? '' : `${sub} `}--help)`;
}

/**
 * Runs `oapp` with `args` (without `node` and the script) and returns the exit status. Prints errors as
 * `oapp: CODE: message`, one line each on stderr, never a stack trace; with `--json` also `{ok:false, errors}` on
 * stdout.
 */
export async function run(args: readonly string[], ctx: Context = processContext()): Promise<number> {
  const json = args.includes('--json');
  const fail = (code: string, message: string, status: number): number => {
    ctx.error(`oapp: ${code}: ${message}`);
    if (json) ctx.printJson({ ok: false, errors: [{ code, message }] });
    return status;
  };
  let status: number | undefined;
  try {
    refuseKeysOnCommandLine(args);
    const program = await createProgram(ctx, (code) => (status = code), reachable(args));
    if (args.length === 0) {
      program.outputHelp({ error: true });
      return EXIT_USAGE;
    }
    await program.parseAsync([...args], { from: 'user' });
    return status ?? EXIT_OK;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version') return EXIT_OK;
      if (err.code === 'commander.help' || err.code === 'commander.executeSubCommandAsync') return EXIT_USAGE;
      return fail('CLI_USAGE', usageLine(err, args), EXIT_USAGE);
    }
    const { code, message } = describeError(err);
    if (code === 'CLI_INTERNAL' && ctx.env['OAPP_DEBUG'] === '1' && err instanceof Error)
      ctx.error(err.stack ?? '');
    return fail(code, message, exitCodeOf(err));
  } finally {
    wipeLoadedKeys();
    removePending();
  }
}
