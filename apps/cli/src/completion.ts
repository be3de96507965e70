import type { Argument, Command, Option } from 'commander';

// `oapp completion bash|zsh|fish`: scripts generated from the program's own commands, options, choices and
// descriptions (the ones `--help` shows), so they cannot drift from the command line they complete.

/** The shells `oapp completion` writes a script for. */
export const SHELLS = ['bash', 'zsh', 'fish'] as const;
/** One of {@link SHELLS}. */
export type Shell = (typeof SHELLS)[number];

/** What the value of an option, or an operand, completes to. */
type Values =
  | { readonly kind: 'files' | 'directories' | 'text' | 'none' }
  | { readonly kind: 'choices'; readonly choices: readonly string[] };

interface OptionModel {
  /** `-o`, `--output`: at least one of them. */
  readonly flags: readonly string[];
  readonly short?: string | undefined;
  readonly long?: string | undefined;
  readonly description: string;
  readonly value: Values;
  /** The value's placeholder in the help (`file` in `<file>`). */
  readonly valueName: string;
  readonly repeatable: boolean;
}

interface CommandModel {
  readonly name: string;
  readonly description: string;
  readonly options: readonly OptionModel[];
  readonly operands: Values;
}

interface ProgramModel {
  readonly name: string;
  readonly options: readonly OptionModel[];
  readonly commands: readonly CommandModel[];
}

/** Value placeholders (`<file>`, `<src>`, `<dir>`) that name paths; any other is free text. */
function valuesOf(name: string, choices: readonly string[] | undefined): Values {
  if (choices !== undefined) return { kind: 'choices', choices };
  if (name === 'file' || name === 'src' || name.endsWith('-file')) return { kind: 'files' };
  if (name === 'dir') return { kind: 'directories' };
  return { kind: 'text' };
}

function optionModel(o: Option): OptionModel {
  const placeholder = /[<[]([^>\]]+)[>\]]/.exec(o.flags)?.[1];
  const takesValue = o.required || o.optional;
  return {
    flags: [o.short, o.long].filter((f): f is string => f !== undefined),
    short: o.short,
    long: o.long,
    description: o.description,
    value: takesValue ? valuesOf(placeholder ?? '', o.argChoices) : { kind: 'none' },
    valueName: placeholder ?? 'value',
    // The help text says so for every option that collects repeated values.
    repeatable: o.variadic || /\brepeatable\b/.test(o.description),
  };
}

function operandsOf(args: readonly Argument[]): Values {
  const first = args[0];
  if (first === undefined) return { kind: 'none' };
  // Every operand without choices names a file (or - for standard input).
  return valuesOf('file', first.argChoices);
}

/** The program's commands and options as the help shows them (the implicit `help` command included). */
function completionModel(program: Command): ProgramModel {
  const help = program.createHelp();
  const visible = help.visibleCommands(program);
  const names = visible.map((c) => c.name());
  const commands = visible.map((c): CommandModel => ({
    name: c.name(),
    description: help.subcommandDescription(c),
    options: help.visibleOptions(c).map(optionModel),
    // The implicit `help` command is not in program.commands: its operand is a command name.
    operands: program.commands.includes(c)
      ? operandsOf(c.registeredArguments)
      : { kind: 'choices', choices: names.filter((n) => n !== c.name()) },
  }));
  return { name: program.name(), options: help.visibleOptions(program).map(optionModel), commands };
}

/** A word in single quotes for bash and zsh (`'` closed, escaped, reopened). */
function quote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** A word in single quotes for fish, where `\\` and `\'` are escapes inside them. */
function fishQuote(text: string): string {
  return `'${text.replace(/[\\']/g, '\\$&')}'`;
}

// ---- bash -----------------------------------------------------------------------------------------------

function bashValues(v: Values): string {
  switch (v.kind) {
    case 'choices':
      return `COMPREPLY=($(compgen -W ${quote(v.choices.join(' '))} -- "$cur"))`;
    case 'files':
      return '_oapp_paths -f';
    case 'directories':
      return '_oapp_paths -d';
    default:
      return 'COMPREPLY=()';
  }
}

function bashCommand(c: CommandModel): string[] {
  const withValue = c.options.filter((o) => o.value.kind !== 'none');
  const cases = withValue.map((o) => `        ${o.flags.join('|')}) ${bashValues(o.value)}; return ;;`);
  const words = c.options.flatMap((o) => o.flags).join(' ');
  return [
    `    ${c.name})`,
    ...(cases.length === 0 ? [] : ['      case $prev in', ...cases, '      esac']),
    `      if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W ${quote(words)} -- "$cur")); return; fi`,
    `      ${bashValues(c.operands)} ;;`,
  ];
}

function bashScript(m: ProgramModel, header: string[]): string {
  const rootWords = m.options.flatMap((o) => o.flags).join(' ');
  const commands = m.commands.map((c) => c.name).join(' ');
  return [
    ...header.map((l) => `# ${l}`),
    '_oapp_paths() {',
    "  local IFS=$'\\n'",
    '  compopt -o filenames 2>/dev/null',
    '  COMPREPLY=($(compgen "$1" -- "$cur"))',
    '}',
    '_oapp() {',
    '  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} cmd= i',
    '  # The command is the first word that is not an option (the program options take no value).',
    '  for ((i = 1; i < COMP_CWORD; i++)); do',
    '    case ${COMP_WORDS[i]} in',
    '      -*) ;;',
    '      *) cmd=${COMP_WORDS[i]}; break ;;',
    '    esac',
    '  done',
    '  case $cmd in',
    "    '')",
    `      if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W ${quote(rootWords)} -- "$cur")); return; fi`,
    `      COMPREPLY=($(compgen -W ${quote(commands)} -- "$cur")) ;;`,
    ...m.commands.flatMap(bashCommand),
    '  esac',
    '}',
    `complete -F _oapp ${m.name}`,
    '',
  ].join('\n');
}

// ---- zsh ------------------------------------------------------------------------------------------------

/** Text inside an `_arguments` `[description]` or a `_describe` entry. */
function zshText(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/([[\]:])/g, '\\$1');
}

function zshAction(v: Values, message: string): string {
  switch (v.kind) {
    case 'choices':
      return `:${message}:(${v.choices.join(' ')})`;
    case 'files':
      return `:${message}:_files`;
    case 'directories':
      return `:${message}:_files -/`;
    case 'text':
      return `:${message}: `;
    default:
      return '';
  }
}

/**
 * One `_arguments` spec: `'(-o --output)'{-o,--output}'[description]:file:_files'`. `exclusive` overrides the
 * exclusion list (the program's `--help` and `--version` exclude everything else: `(- *)`).
 */
function zshOption(o: OptionModel, exclusive?: string): string {
  const rest = quote(`[${zshText(o.description)}]${zshAction(o.value, o.valueName)}`);
  const own = o.flags.length > 1 ? quote(`(${o.flags.join(' ')})`) : '';
  const prefix = exclusive !== undefined ? quote(exclusive) : o.repeatable ? "'*'" : own;
  const names = o.flags.length > 1 ? `{${o.flags.join(',')}}` : o.flags[0]!;
  return `${prefix}${names}${rest}`;
}

function zshCommand(c: CommandModel): string[] {
  const operands = c.operands.kind === 'none' ? [] : [quote(`*${zshAction(c.operands, 'operand')}`)];
  const specs = [...c.options.map((o) => zshOption(o)), ...operands];
  return [
    `        ${c.name})`,
    '          _arguments -s \\',
    ...specs.map((s) => `            ${s} \\`),
    '          ;;',
  ];
}

function zshScript(m: ProgramModel, header: string[]): string {
  return [
    `#compdef ${m.name}`,
    ...header.map((l) => `# ${l}`),
    '_oapp() {',
    '  local curcontext=$curcontext state state_descr line',
    '  typeset -A opt_args',
    '  local -a commands',
    '  commands=(',
    ...m.commands.map((c) => `    ${quote(`${zshText(c.name)}:${c.description}`)}`),
    '  )',
    '  _arguments -C \\',
    ...m.options.map((o) => `    ${zshOption(o, '(- *)')} \\`),
    "    '1: :->command' \\",
    "    '*:: :->argument' && return",
    '  case $state in',
    "    command) _describe -t commands 'oapp command' commands ;;",
    '    argument)',
    '      case $words[1] in',
    ...m.commands.flatMap(zshCommand),
    '      esac',
    '      ;;',
    '  esac',
    '}',
    // Autoloaded from $fpath, or sourced (`source <(oapp completion zsh)`).
    `if [[ $funcstack[1] == _oapp ]]; then _oapp "$@"; else compdef _oapp ${m.name}; fi`,
    '',
  ].join('\n');
}

// ---- fish -----------------------------------------------------------------------------------------------

function fishValues(v: Values): string {
  switch (v.kind) {
    case 'choices':
      return ` -x -a ${fishQuote(v.choices.join(' '))}`;
    case 'files':
      return ' -r -F';
    case 'directories':
      return ` -x -a ${fishQuote('(__fish_complete_directories)')}`;
    case 'text':
      return ' -x';
    default:
      return '';
  }
}

function fishOption(condition: string, o: OptionModel): string {
  const short = o.short === undefined ? '' : ` -s ${o.short.slice(1)}`;
  const long = o.long === undefined ? '' : ` -l ${o.long.slice(2)}`;
  return `complete -c oapp -n ${condition}${short}${long}${fishValues(o.value)} -d ${fishQuote(o.description)}`;
}

/** Operands: fish offers files unless told otherwise (`-f`), and the choices if there are any. */
function fishOperands(when: string, v: Values): string[] {
  if (v.kind === 'files') return [];
  const choices = v.kind === 'choices' ? ` -a ${fishQuote(v.choices.join(' '))}` : '';
  return [`complete -c oapp -n ${when} -f${choices}`];
}

function fishCommand(c: CommandModel): string[] {
  const when = fishQuote(`__fish_seen_subcommand_from ${c.name}`);
  return [...c.options.map((o) => fishOption(when, o)), ...fishOperands(when, c.operands)];
}

function fishScript(m: ProgramModel, header: string[]): string {
  const top = '__fish_use_subcommand';
  return [
    ...header.map((l) => `# ${l}`),
    `complete -c ${m.name} -e`,
    `complete -c ${m.name} -n ${top} -f`,
    ...m.options.map((o) => fishOption(top, o)),
    ...m.commands.map(
      (c) => `complete -c ${m.name} -n ${top} -a ${fishQuote(c.name)} -d ${fishQuote(c.description)}`,
    ),
    ...m.commands.flatMap(fishCommand),
    '',
  ].join('\n');
}

const INSTALL: Record<Shell, readonly string[]> = {
  bash: [
    'Load it now:    source <(oapp completion bash)',
    'or install it:  oapp completion bash > ~/.local/share/bash-completion/completions/oapp',
  ],
  zsh: [
    'Load it now:    source <(oapp completion zsh)   (after compinit)',
    'or install it:  oapp completion zsh > "${fpath[1]}/_oapp"',
  ],
  fish: [
    'Load it now:    oapp completion fish | source',
    'or install it:  oapp completion fish > ~/.config/fish/completions/oapp.fish',
  ],
};

/** The completion script of `program` for `shell`. */
export function completionScript(program: Command, shell: Shell, version: string): string {
  const model = completionModel(program);
  const header = [
    `${shell} completion for ${version}, generated by \`oapp completion ${shell}\`.`,
    ...INSTALL[shell],
  ];
  if (shell === 'bash') return bashScript(model, header);
  if (shell === 'zsh') return zshScript(model, header);
  return fishScript(model, header);
}
