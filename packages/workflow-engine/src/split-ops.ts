import { EngineError } from './errors.js';
import { stringArg } from './host-args.js';
import type { RunContext } from './run-context.js';

/** Most items one run of a `scripted-split-aggregate` step may emit (README.md "Split and aggregate"). */
export const MAX_SPLIT_ITEMS = 10_000;

/** How many items of one split-aggregate run are in their call cycle at the same time. */
export const SPLIT_CONCURRENCY = 4;

/**
 * The items a splitGenerator emitted, kept on the host side. Bounded by {@link MAX_SPLIT_ITEMS} and by `maxBytes`
 * (UTF-8 bytes of all items together). A breach is remembered: the step fails even if the script catches it.
 */
export class SplitItems {
  readonly items: string[] = [];
  private bytes = 0;
  /** The `ENGINE_LIMIT` message once a limit was hit. */
  breach: string | undefined;

  constructor(private readonly maxBytes: number) {}

  /** @throws EngineError `ENGINE_LIMIT` past either limit (the item is not kept). */
  add(item: string): void {
    if (this.breach === undefined && this.items.length >= MAX_SPLIT_ITEMS)
      this.breach = `more than ${MAX_SPLIT_ITEMS} split items`;
    const size = Buffer.byteLength(item, 'utf8');
    if (this.breach === undefined && this.bytes + size > this.maxBytes)
      this.breach = `split items over ${this.maxBytes} bytes in total`;
    if (this.breach !== undefined) throw new EngineError('ENGINE_LIMIT', this.breach);
    this.bytes += size;
    this.items.push(item);
  }
}

/**
 * `addSplitReturnItem(item)`: emits one item (the prelude passes strings as they are and other values as JSON).
 * Only a splitGenerator has somewhere to put items.
 */
export function addSplitReturnItem(ctx: RunContext, args: unknown[]): void {
  if (!ctx.split) {
    throw new EngineError(
      'ENGINE_NOT_PERMITTED',
      'addSplitReturnItem is only available in the splitGenerator of a scripted-split-aggregate step',
    );
  }
  ctx.split.add(stringArg(args[0], 'addSplitReturnItem: item'));
}
