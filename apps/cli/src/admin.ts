import type { TrustedKey } from '@org/oapp-format';
import type { Command } from 'commander';
import { collect, type Context } from './context.js';
import { CliError } from './errors.js';
import { ENV_SCHEME, loadAdminKeys } from './keys.js';

// The bootstrap administrators of `verify-bootstrap` and `decrypt-bootstrap`: `--admin-key` (repeatable) and
// `--threshold`, or — as the agent reads them — AGENT_BOOTSTRAP_ADMIN_KEYS or AGENT_BOOTSTRAP_ADMIN_KEYS_FILE and
// AGENT_BOOTSTRAP_ADMIN_THRESHOLD.

/** The agent's variables (apps/agent-runtime README, "Signed bootstraps"). */
export const ADMIN_KEYS_VAR = 'AGENT_BOOTSTRAP_ADMIN_KEYS';
export const ADMIN_KEYS_FILE_VAR = 'AGENT_BOOTSTRAP_ADMIN_KEYS_FILE';
export const ADMIN_THRESHOLD_VAR = 'AGENT_BOOTSTRAP_ADMIN_THRESHOLD';

/** The administrators whose signatures a bootstrap needs: K of these keys. */
export interface Administrators {
  readonly keys: TrustedKey[];
  readonly threshold: number;
}

/** The parsed values of {@link addAdminOptions}. */
export interface AdminOptionValues {
  adminKey?: string[];
  threshold?: string;
}

/** Adds `--admin-key` (repeatable) and `--threshold`. */
export function addAdminOptions(cmd: Command): Command {
  return cmd
    .option(
      '--admin-key <src>',
      `administrator: sign public key (FILE or env://NAME; a file may list several hex keys, one a line); repeatable (default: $${ADMIN_KEYS_VAR} or $${ADMIN_KEYS_FILE_VAR}, as the agent)`,
      collect,
    )
    .option(
      '--threshold <k>',
      `how many administrators must have signed, 1 to the number of keys (default 1, or $${ADMIN_THRESHOLD_VAR} with the agent's variables)`,
    );
}

const usage = (message: string) => new CliError('CLI_USAGE', message);

/**
 * The administrators of the options, else of the agent's variables; undefined when neither names any key.
 * @throws {@link CliError} usage errors (both variables set, a threshold out of range, a bad key source).
 */
export async function administratorsOf(
  ctx: Context,
  o: AdminOptionValues,
): Promise<Administrators | undefined> {
  const fromFlags = o.adminKey !== undefined && o.adminKey.length > 0;
  let srcs: string[];
  let thresholdText = o.threshold;
  let where = '--threshold';
  if (fromFlags) srcs = o.adminKey!;
  else {
    const inline = ctx.env[ADMIN_KEYS_VAR];
    const file = ctx.env[ADMIN_KEYS_FILE_VAR];
    const set = (v: string | undefined) => v !== undefined && v.trim() !== '';
    if (set(inline) && set(file))
      throw usage(
        `${ADMIN_KEYS_VAR} and ${ADMIN_KEYS_FILE_VAR} are both set: the agent refuses that; unset one`,
      );
    srcs = set(inline) ? [`${ENV_SCHEME}${ADMIN_KEYS_VAR}`] : set(file) ? [file!.trim()] : [];
    if (srcs.length > 0 && thresholdText === undefined && set(ctx.env[ADMIN_THRESHOLD_VAR])) {
      thresholdText = ctx.env[ADMIN_THRESHOLD_VAR]!.trim();
      where = ADMIN_THRESHOLD_VAR;
    }
  }
  if (srcs.length === 0) {
    if (o.threshold !== undefined) throw usage('--threshold needs --admin-key');
    return undefined;
  }
  const keys = await loadAdminKeys(srcs, '--admin-key', ctx.env, (m) => ctx.warn(m));
  const threshold =
    thresholdText === undefined ? 1 : /^[0-9]{1,6}$/.test(thresholdText) ? Number(thresholdText) : 0;
  if (threshold < 1 || threshold > keys.length)
    throw usage(
      `${where} must be a whole number from 1 to ${keys.length} (the number of administrator keys)`,
    );
  return { keys, threshold };
}
