import { Command, CommanderError, Option } from 'commander';
import { refuseKeysOnCommandLine } from './argv-guard.js';
import { completionCommand, manCommand, versionCommand } from './commands/about.js';
import { buildCommand, compileCommand, hashCommand } from './commands/workflows.js';
import {
  decryptBootstrapCommand,
  encryptBootstrapCommand,
  encryptStringCommand,
} from './commands/encrypt.js';
import { signBootstrapCommand, verifyBootstrapCommand } from './commands/bootstrap-signature.js';
import { keygenCommand } from './commands/keygen.js';
import { packageCommand } from './commands/package.js';
import { testCommand } from './commands/test.js';
import { envelopeCommand, inspectCommand, openCommand, verifyCommand } from './commands/packages.js';
import { processContext, type Context } from './context.js';
import { describeError, EXIT_OK, EXIT_USAGE, exitCodeOf, oneLine } from './errors.js';
import { removePending } from './io.js';
import { wipeLoadedKeys } from './keys.js';
import { VERSION_TEXT } from './version.js';

export { VERSION } from './version.js';

/** Builds the `oapp` program; `done` receives each command's exit status. */
export function createProgram(ctx: Context, done: (code: number) => void): Command {
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
  const commands = [
    keygenCommand,
    packageCommand,
    inspectCommand,
    verifyCommand,
    openCommand,
    envelopeCommand,
    encryptStringCommand,
    encryptBootstrapCommand,
    decryptBootstrapCommand,
    signBootstrapCommand,
    verifyBootstrapCommand,
    compileCommand,
    hashCommand,
    buildCommand,
    testCommand,
    versionCommand,
    completionCommand,
    manCommand,
  ];
  for (const make of commands) program.addCommand(make(ctx, done).copyInheritedSettings(program));
  program.on('option:v', () => {
    ctx.print(VERSION_TEXT);
    throw new CommanderError(0, 'commander.version', VERSION_TEXT);
  });
  return program;
}

function usageLine(err: CommanderError, program: Command, args: readonly string[]): string {
  const names = new Set(program.commands.map((c) => c.name()));
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
  const program = createProgram(ctx, (code) => (status = code));
  try {
    refuseKeysOnCommandLine(args);
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
      return fail('CLI_USAGE', usageLine(err, program, args), EXIT_USAGE);
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
