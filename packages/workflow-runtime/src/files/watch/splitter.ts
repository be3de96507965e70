import { MAX_SPLITTER_MATCH_CHARS } from '../regex-budget.js';

/**
 * Cuts appended text into events (ADR 0074, 0134). The cut is at the end of each `eventSplitter` match with
 * `splitAtEnd` (the match ends the event; the trigger's default), or at its start without (the match begins the
 * next event); the matched text stays in the message, so the messages joined give back the text exactly. The
 * text after the last cut is pending until more text, {@link EventSplitter.flush}, or the size bound: pending text
 * longer than `maxEventChars` is cut there (an event that long is delivered in pieces, nothing is dropped). Each
 * scan covers the new text and the last {@link MAX_SPLITTER_MATCH_CHARS} characters before it, so memory and time
 * stay bounded by `maxEventChars`.
 */
export class EventSplitter {
  readonly #re: RegExp;
  readonly #atEnd: boolean;
  readonly #max: number;
  #text = '';
  /** Where the pending event starts in `#text` (events before it were taken). */
  #start = 0;
  /** Where the next scan starts: no match can start before it. */
  #from = 0;

  constructor(pattern: string, splitAtEnd: boolean, maxEventChars: number) {
    this.#re = new RegExp(pattern, 'g');
    this.#atEnd = splitAtEnd;
    this.#max = Math.max(MAX_SPLITTER_MATCH_CHARS * 2, maxEventChars);
  }

  /** Characters waiting for their end. */
  get pendingChars(): number {
    return this.#text.length - this.#start;
  }

  /** Adds text; returns the events it completed, in order. */
  push(text: string): string[] {
    this.#text = this.#text.slice(this.#start) + text;
    this.#from -= this.#start;
    this.#start = 0;
    const out: string[] = [];
    for (;;) {
      const cut = this.#nextCut();
      if (cut !== undefined && cut - this.#start <= this.#max) out.push(this.#take(cut));
      else if (this.pendingChars > this.#max) out.push(this.#take(this.#forcedCut()));
      else return out;
    }
  }

  /** The pending text as a last event (rotation, truncation, idle), or undefined when there is none. */
  flush(): string | undefined {
    if (this.pendingChars === 0) return undefined;
    return this.#take(this.#text.length);
  }

  #nextCut(): number | undefined {
    const minStart = this.#start + (this.#atEnd ? 0 : 1); // a match at the start already began this event
    this.#re.lastIndex = Math.max(this.#from, minStart);
    const m = this.#re.exec(this.#text);
    if (m === null) {
      this.#from = Math.max(minStart, this.#text.length - MAX_SPLITTER_MATCH_CHARS + 1);
      return undefined;
    }
    return this.#atEnd ? m.index + m[0].length : m.index;
  }

  /** `#max` characters on, one less when that would split a surrogate pair. */
  #forcedCut(): number {
    const end = this.#start + this.#max;
    const c = this.#text.charCodeAt(end - 1);
    return c >= 0xd800 && c <= 0xdbff ? end - 1 : end;
  }

  #take(end: number): string {
    const event = this.#text.slice(this.#start, end);
    this.#start = end;
    this.#from = end;
    return event;
  }
}
