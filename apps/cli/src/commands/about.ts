import { Argument, Command } from 'commander';
import type { Context } from '../context.js';
import { completionScript, SHELLS, type Shell } from '../completion.js';
import { manPage } from '../man.js';
import { VERSION_TEXT } from '../version.js';

type Done = (code: number) => void;

/** The program a command was added to (completion and the man page describe all of it). */
function programOf(cmd: Command): Command {
  let root = cmd;
  while (root.parent !== null) root = root.parent;
  return root;
}

/** `oapp version`: what `oapp --version` prints (cosign's spelling). */
export function versionCommand(ctx: Context, done: Done): Command {
  return new Command('version')
    .description('print the version (the same as --version and -v)')
    .addHelpText('after', '\nExample:\n  oapp version')
    .action(() => {
      ctx.print(VERSION_TEXT);
      done(0);
    });
}

/** `oapp completion bash|zsh|fish`. */
export function completionCommand(_ctx: Context, done: Done): Command {
  const cmd: Command = new Command('completion')
    .description('print a shell completion script, generated from the commands and options of this oapp')
    .addArgument(new Argument('<shell>', 'the shell').choices(SHELLS))
    .addHelpText(
      'after',
      '\nExamples:\n' +
        '  source <(oapp completion bash)     # or: oapp completion bash > ~/.local/share/bash-completion/completions/oapp\n' +
        '  oapp completion zsh > "${fpath[1]}/_oapp"\n' +
        '  oapp completion fish > ~/.config/fish/completions/oapp.fish',
    )
    .action(async (shell: Shell) => {
      const { STDIO, writeOutput } = await import('../io.js');
      await writeOutput(STDIO, completionScript(programOf(cmd), shell, VERSION_TEXT));
      done(0);
    });
  return cmd;
}

/** `oapp man`: the help as a man(7) page. */
export function manCommand(_ctx: Context, done: Done): Command {
  const cmd: Command = new Command('man')
    .description('print the manual page (man(7) roff, made from the help text of every command)')
    .addHelpText('after', '\nExamples:\n  oapp man | man -l -\n  oapp man > ~/.local/share/man/man1/oapp.1')
    .action(async () => {
      const { STDIO, writeOutput } = await import('../io.js');
      await writeOutput(STDIO, manPage(programOf(cmd), VERSION_TEXT));
      done(0);
    });
  return cmd;
}
