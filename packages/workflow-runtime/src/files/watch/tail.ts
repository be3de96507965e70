import type { FileHandle } from 'node:fs/promises';
import { StringDecoder } from 'node:string_decoder';
import { openRegular, type Dir } from '../confined.js';
import { EventSplitter } from './splitter.js';

/** Bytes read per read call. */
export const READ_CHUNK_BYTES = 64 * 1024;

/** How a watcher cuts events: the trigger's splitter settings and the event size bound. */
export interface SplitSettings {
  readonly eventSplitter: string;
  readonly splitAtEnd: boolean;
  readonly eventChars: number;
}

/**
 * One followed file, by identity (device, inode): its open handle (kept open, so the rest of a rotated file can
 * still be read), how far it was read and how far delivered, and its splitter.
 */
export class FileTail {
  readonly key: string;
  readonly ino: bigint;
  name: string;
  /** Byte offset of the next read. */
  readOffset: number;
  /** Bytes delivered in finished runs (what is persisted). */
  delivered: number;
  /** When the file last grew (for the idle flush). */
  lastGrowth: number;
  #fh: FileHandle | undefined;
  #decoder = new StringDecoder('utf8');
  #splitter: EventSplitter;
  readonly #settings: SplitSettings;

  constructor(key: string, ino: bigint, name: string, offset: number, settings: SplitSettings, now: number) {
    this.key = key;
    this.ino = ino;
    this.name = name;
    this.readOffset = offset;
    this.delivered = offset;
    this.lastGrowth = now;
    this.#settings = settings;
    this.#splitter = this.#newSplitter();
  }

  #newSplitter(): EventSplitter {
    const s = this.#settings;
    return new EventSplitter(s.eventSplitter, s.splitAtEnd, s.eventChars);
  }

  get pendingChars(): number {
    return this.#splitter.pendingChars;
  }

  /** Opens the file by name in `dir` (confined.ts checks) when not open; false when the name now holds another file. */
  async open(dir: Dir, what: string): Promise<boolean> {
    if (this.#fh !== undefined) return true;
    const [fh, st] = await openRegular(dir, this.name, what);
    if (st.ino !== this.ino) {
      await fh.close();
      return false;
    }
    this.#fh = fh;
    return true;
  }

  /** The file's current size through the open handle (follows the file across renames). */
  async size(): Promise<number> {
    return this.#fh === undefined ? 0 : Number((await this.#fh.stat()).size);
  }

  /** Reads up to one chunk at the read offset; returns the events it completed ([] at the end of the file). */
  async read(): Promise<{ events: string[]; bytes: number }> {
    if (this.#fh === undefined) return { events: [], bytes: 0 };
    const buf = Buffer.allocUnsafe(READ_CHUNK_BYTES);
    const { bytesRead } = await this.#fh.read(buf, 0, buf.length, this.readOffset);
    if (bytesRead === 0) return { events: [], bytes: 0 };
    this.readOffset += bytesRead;
    return { events: this.#splitter.push(this.#decoder.write(buf.subarray(0, bytesRead))), bytes: bytesRead };
  }

  /** The pending text (and any incomplete character) as a last event. */
  flush(): string[] {
    const rest = this.#decoder.end();
    const events = rest === '' ? [] : this.#splitter.push(rest);
    const last = this.#splitter.flush();
    return last === undefined ? events : [...events, last];
  }

  /** After a truncation: read again from the start, with nothing pending. */
  restart(): void {
    this.readOffset = 0;
    this.delivered = 0;
    this.#decoder = new StringDecoder('utf8');
    this.#splitter = this.#newSplitter();
  }

  async close(): Promise<void> {
    const fh = this.#fh;
    this.#fh = undefined;
    await fh?.close().catch(() => undefined);
  }
}
