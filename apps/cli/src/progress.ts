/** Inputs at least this large get a progress bar (when stderr is a terminal). */
export const PROGRESS_MIN_BYTES = 64 * 1024 * 1024;

/** A progress display for one long read. */
export interface Progress {
  advance(bytes: number): void;
  done(): void;
}

const NONE: Progress = { advance: () => undefined, done: () => undefined };

/** A bar is shown only on a terminal and only for large inputs: never in pipes, logs or tests. */
export function wantsProgress(isTTY: boolean | undefined, totalBytes: number | undefined): boolean {
  return isTTY === true && totalBytes !== undefined && totalBytes >= PROGRESS_MIN_BYTES;
}

/** The text of the bar: `label [#####-----]  42%  120/285 MiB`. */
export function renderProgress(label: string, done: number, total: number, width = 30): string {
  const ratio = total === 0 ? 1 : Math.min(1, done / total);
  const filled = Math.round(ratio * width);
  const mib = (n: number) => Math.floor(n / (1024 * 1024));
  const pct = String(Math.floor(ratio * 100)).padStart(3);
  return `${label} [${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${pct}%  ${mib(done)}/${mib(total)} MiB`;
}

/** A progress bar on `stream` (stderr) when {@link wantsProgress} says so, else a no-op. */
export function progressFor(
  label: string,
  totalBytes: number | undefined,
  stream: NodeJS.WriteStream = process.stderr,
): Progress {
  if (!wantsProgress(stream.isTTY, totalBytes) || totalBytes === undefined) return NONE;
  let seen = 0;
  let shown = -1;
  const draw = () => {
    const pct = Math.floor((seen / totalBytes) * 100);
    if (pct === shown) return;
    shown = pct;
    stream.write(`\r${renderProgress(label, seen, totalBytes)}`);
  };
  return {
    advance(bytes) {
      seen += bytes;
      draw();
    },
    done() {
      if (shown !== -1) stream.write('\n');
    },
  };
}

/** Counts the bytes of `source` into `progress` as they are read. */
export async function* counted(
  source: AsyncIterable<Uint8Array>,
  progress: Progress,
): AsyncGenerator<Uint8Array, void, undefined> {
  for await (const chunk of source) {
    progress.advance(chunk.length);
    yield chunk;
  }
}
