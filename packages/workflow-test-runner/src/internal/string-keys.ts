import { isCryptoError, parseKeyTupleList, type KeyTuple } from '@org/envelope-crypto';
import type { Redactor } from '@org/workflow-engine';
import { TestRunnerError } from '../errors.js';

/** Test variables that hold `-2/` string keys, in the order their candidates are tried (the legacy name second). */
export const STRING_KEY_VARIABLES = ['AGENT_STRING_SECRETKEYS', 'OPSCOTCH_STRING_SECRETKEYS'] as const;

/**
 * The `-2/` string key candidates of a test: the comma-separated `<sender public hex>/<secret hex>` tuples of
 * {@link STRING_KEY_VARIABLES} (as the agent reads `AGENT_STRING_SECRETKEYS`, S45). Each value, each entry and
 * each secret key is registered with `redactor` before anything can log it.
 *
 * @throws TestRunnerError `TESTRUNNER_DEPLOY_FAILED` naming the variable and the entry, never the value.
 */
export function stringKeysOf(variables: Readonly<Record<string, string>>, redactor: Redactor): KeyTuple[] {
  const out: KeyTuple[] = [];
  for (const name of STRING_KEY_VARIABLES) {
    const value = Object.prototype.hasOwnProperty.call(variables, name) ? variables[name] : undefined;
    if (value === undefined) continue;
    registerKeyText(value, redactor);
    try {
      out.push(...parseKeyTupleList(value));
    } catch (err) {
      if (!isCryptoError(err)) throw err;
      throw new TestRunnerError('TESTRUNNER_DEPLOY_FAILED', `variable ${name}: ${err.message}`, {
        cause: err,
      });
    }
  }
  return out;
}

/** The key text as the redactor should know it: whole, per entry, and the secret half (either letter case). */
function registerKeyText(value: string, redactor: Redactor): void {
  redactor.add(value);
  for (const entry of value.split(',')) {
    const text = entry.trim();
    const secret = text.slice(text.indexOf('/') + 1);
    for (const form of [text, secret, secret.toLowerCase(), secret.toUpperCase()]) redactor.add(form);
  }
}
