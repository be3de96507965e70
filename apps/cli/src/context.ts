import type { Env } from './keys.js';

/** What every command gets: the environment (key variables) and the two text channels. */
export interface Context {
  readonly env: Env;
  /** One `oapp: warning: …` line on stderr. */
  warn(message: string): void;
  /** Text for the user on stdout. */
  print(text: string): void;
  /** One JSON document on stdout (`--json`). */
  printJson(value: unknown): void;
  /** One line on stderr. */
  error(line: string): void;
}

/** The process context: stdout for results, stderr for errors and warnings. */
export function processContext(env: Env = process.env): Context {
  return {
    env,
    warn: (m) => void process.stderr.write(`oapp: warning: ${m}\n`),
    print: (t) => void process.stdout.write(t.endsWith('\n') ? t : `${t}\n`),
    printJson: (v) => void process.stdout.write(`${JSON.stringify(v, null, 2)}\n`),
    error: (l) => void process.stderr.write(`${l}\n`),
  };
}

/** Collects the values of a repeatable option. */
export function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}
