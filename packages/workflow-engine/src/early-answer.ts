/**
 * A host call's answer given before the call's work is done (ADR 0123): the sandbox gets `value` at once and goes
 * on, while the host does `rest` right after, on its own thread, before it handles the sandbox's next message.
 * Only for work that is certain to succeed as far as the script can tell (it could not have thrown at the call);
 * if `rest` throws all the same, its error fails the processor run as the run ends.
 */
export class EarlyAnswer {
  constructor(
    readonly value: unknown,
    readonly rest: () => void,
  ) {}
}
