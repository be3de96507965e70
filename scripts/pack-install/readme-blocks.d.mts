/** A ```sh or ```bash block of a README. */
export interface ShellBlock {
  /** The fence's line, 1-based. */
  readonly line: number;
  readonly lang: string;
  /** The lines between the fences. */
  readonly body: string;
  /** The `Needs first:` line right before the block, if there is one. */
  readonly note: string | undefined;
}

/** The note that a block needs something first. */
export declare const NEEDS_FIRST: RegExp;
/** Every README.md of the repository, relative to `root`, sorted. */
export declare function readmeFiles(root: string): string[];
/** The shell blocks of one Markdown text. */
export declare function shellBlocksOf(text: string, file?: string): ShellBlock[];
/** Every shell block of every README, with its file. */
export declare function shellBlocks(root: string): (ShellBlock & { readonly file: string })[];
