import { CliError } from './errors.js';

/** 64 hex digits (a 32-byte key) or 128 (a 64-byte `sign` secret key). */
const KEY_HEX = '(?:[0-9a-fA-F]{64}|[0-9a-fA-F]{128})';
/** A bare key, or `<sender public key hex>/<secret key hex>` tuples separated by commas. */
const KEY_LIKE = new RegExp(
  `^\\s*(?:${KEY_HEX}|${KEY_HEX}/${KEY_HEX}(?:\\s*,\\s*${KEY_HEX}/${KEY_HEX})*)\\s*$`,
);

/** True when a command-line value looks like key material. */
export function looksLikeKey(value: string): boolean {
  return KEY_LIKE.test(value);
}

/**
 * S153: refuses a command line that carries something shaped like key material, in any position (an option
 * value, `--option=value` or an operand): argv is visible to other users of the machine (`ps`, /proc) and lands
 * in shell history. The message names the position, never the value.
 * @throws {@link CliError} `CLI_KEY_ON_COMMAND_LINE`.
 */
export function refuseKeysOnCommandLine(args: readonly string[]): void {
  args.forEach((arg, i) => {
    const eq = arg.startsWith('--') ? arg.indexOf('=') : -1;
    const value = eq === -1 ? arg : arg.slice(eq + 1);
    if (!looksLikeKey(value)) return;
    const prev = args[i - 1];
    const option = eq !== -1 ? arg.slice(0, eq) : prev?.startsWith('-') ? prev : undefined;
    const where = option === undefined ? `argument ${i + 1}` : `the value of ${option}`;
    const flag = option ?? '--key';
    throw new CliError(
      'CLI_KEY_ON_COMMAND_LINE',
      `${where} looks like key material, and the command line is visible to other users: ` +
        `put the key in a file (${flag} FILE, mode 0600) or in an environment variable (${flag} env://NAME)`,
    );
  });
}
