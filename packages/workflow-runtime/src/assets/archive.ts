import type { FileHandle } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { fromRandomAccessReaderPromise, RandomAccessReader, type ZipFile } from 'yauzl';
import { AgentError } from '../errors.js';
import { entryStream, inflateSmall, type RangeSource } from './entry-read.js';
import { RangeStream } from './range-stream.js';
import { excerpt, invalid, validateZip, type ArchiveLabel, type AssetEntry } from './validate-zip.js';
import type { AssetLimits } from './zip-checks.js';

export type { AssetEntry } from './validate-zip.js';

/** An entry this small (compressed and uncompressed) is read with one positional read, as one stream chunk. */
export const SMALL_ENTRY_BYTES = 64 * 1024;

/** A validated zip, open for the runtime's lifetime (one file handle). */
export interface AssetArchive {
  /** The file entry of this exact name (directories are not entries). */
  get(name: string): AssetEntry | undefined;
  readonly size: number;
  /**
   * The entry's bytes: a Buffer for a small entry, else a stream (memory bounded by the stream's buffers).
   * Either is exactly `entry.size` bytes, or the read fails (a stream errors mid-way).
   */
  read(entry: AssetEntry): Promise<Buffer | Readable>;
  readonly closed: boolean;
  /** Ends the streams still open (they fail) and closes the file handle once reads in flight are done. */
  close(): Promise<void>;
}

/**
 * yauzl reads the zip through the runtime's own handle (opened with O_NOFOLLOW, closed by the runtime). Open
 * range streams are tracked so that closing the archive ends them.
 */
class HandleReader extends RandomAccessReader implements RangeSource {
  readonly streams = new Set<RangeStream>();
  constructor(private readonly handle: FileHandle) {
    super();
  }
  override _readStreamForRange(start: number, end: number): Readable {
    return this.range(start, end);
  }
  /** `[start, end)` of the file as a tracked stream. */
  range(start: number, end: number): RangeStream {
    const stream = new RangeStream(this.handle, start, end);
    this.streams.add(stream);
    stream.once('close', () => this.streams.delete(stream));
    return stream;
  }
  override read(
    buffer: Buffer,
    offset: number,
    length: number,
    position: number,
    callback: (err: Error | null) => void,
  ): void {
    this.handle.read(buffer, offset, length, position).then(
      ({ bytesRead }) => callback(bytesRead === length ? null : new Error('unexpected end of file')),
      (err: Error) => callback(err),
    );
  }
}

/**
 * Opens a zip for serving: yauzl reads the central directory; every entry's name (S139), limits (S140), local
 * header and descriptor (S142) are checked, entries may not share bytes, and every file entry is read once
 * (streamed) to check its size and CRC-32. The handle is closed when validation fails.
 * @throws {@link AgentError} `AGENT_ASSET_INVALID` naming `label` and the reason.
 */
export async function openAssetArchive(
  handle: FileHandle,
  size: number,
  limits: AssetLimits,
  label: ArchiveLabel,
): Promise<AssetArchive> {
  let zip: ZipFile;
  let files: Map<string, AssetEntry>;
  const reader = new HandleReader(handle);
  try {
    zip = await fromRandomAccessReaderPromise(reader, size, {
      lazyEntries: true,
      autoClose: false,
      decodeStrings: true,
      strictFileNames: true,
      validateEntrySizes: true,
    });
    files = await validateZip(zip, handle, limits, label);
  } catch (err) {
    await handle.close();
    if (err instanceof AgentError) throw err;
    throw invalid(label, err instanceof Error ? excerpt(err.message, 300) : 'not a zip file');
  }
  let closed = false;
  return {
    size,
    get: (name) => files.get(name),
    get closed() {
      return closed;
    },
    async read(entry) {
      if (entry.size > SMALL_ENTRY_BYTES || entry.compressedSize > SMALL_ENTRY_BYTES)
        return entryStream(reader, entry);
      const raw = Buffer.allocUnsafe(entry.compressedSize);
      const { bytesRead } = await handle.read(raw, 0, raw.length, entry.dataStart);
      if (bytesRead !== raw.length) throw new Error('unexpected end of file');
      const body = entry.method === 0 ? raw : await inflateSmall(raw, entry.size);
      if (body.length !== entry.size) throw new Error('the entry has another size than declared');
      return body;
    },
    async close() {
      if (closed) return;
      closed = true;
      zip.close();
      for (const stream of reader.streams) stream.destroy(new Error('the asset archive was closed'));
      await handle.close(); // waits for reads in flight
    },
  };
}
