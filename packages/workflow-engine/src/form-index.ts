/**
 * Forms shorter than this cannot be indexed; the redactor tracks none (its `MIN_SECRET_CHARS` is the same 4).
 */
const PREFIX_CHARS = 4;

/**
 * Buckets of hashed 4-unit prefixes: 2^20 one-byte counters (1 MiB, allocated at the first form). With the most
 * forms the redactor keeps (4 096 evictable values, 8 forms each) about 3 % of positions look into the map.
 */
const BUCKET_BITS = 20;

const BUCKET_MASK = (1 << BUCKET_BITS) - 1;

/**
 * One step of the rolling bucket hash: each unit is shifted 5 bits further per step, so after four steps a unit
 * is shifted past the 20 kept bits and the value depends on the last four units only. The bucket of a prefix is
 * four steps from 0; the scan takes one step per character (ADR 0068).
 */
function step(h: number, unit: number): number {
  return ((h << 5) ^ unit) & BUCKET_MASK;
}

function bucketOf(form: string): number {
  let h = 0;
  for (let i = 0; i < PREFIX_CHARS; i++) h = step(h, form.charCodeAt(i));
  return h;
}

/**
 * Every occurrence of a set of literal strings (the forms of the registered secrets) in one pass over a text,
 * whatever their number (ADR 0068). A text is read once; at each position a counter table of hashed 4-unit
 * prefixes says whether any form may start there, and only then are the forms with that exact prefix compared,
 * longest first. The cost per character does not grow with the number of forms, unlike one regular-expression
 * alternation over all of them, which tries each alternative at each position.
 */
export class FormIndex {
  /** Forms by their first four UTF-16 units, longest first. */
  readonly #byPrefix = new Map<string, string[]>();
  /** Per bucket: how many distinct prefixes hash to it. */
  #buckets: Uint8Array | undefined;

  /** Adds `form` (at least four UTF-16 units; shorter ones are ignored). */
  add(form: string): void {
    if (form.length < PREFIX_CHARS) return;
    const key = form.slice(0, PREFIX_CHARS);
    const list = this.#byPrefix.get(key);
    if (list) {
      if (list.includes(form)) return;
      list.push(form);
      list.sort((x, y) => y.length - x.length);
      return;
    }
    this.#byPrefix.set(key, [form]);
    this.#buckets ??= new Uint8Array(1 << BUCKET_BITS);
    const b = bucketOf(form);
    // A counter at its maximum stays there: the bucket is then always looked into, which is only slower.
    if (this.#buckets[b]! < 0xff) this.#buckets[b]!++;
  }

  /** Removes `form`. */
  delete(form: string): void {
    const key = form.slice(0, PREFIX_CHARS);
    const list = this.#byPrefix.get(key);
    const at = list?.indexOf(form) ?? -1;
    if (!list || at < 0) return;
    list.splice(at, 1);
    if (list.length > 0) return;
    this.#byPrefix.delete(key);
    const b = bucketOf(form);
    if (this.#buckets![b]! < 0xff) this.#buckets![b]!--;
  }

  /**
   * Appends `[start, end)` of the longest form starting at each position of `text` where one starts, in order
   * of start (occurrences may overlap).
   */
  occurrences(text: string, into: [number, number][]): void {
    const buckets = this.#buckets;
    if (buckets === undefined || this.#byPrefix.size === 0 || text.length < PREFIX_CHARS) return;
    let h = step(step(step(0, text.charCodeAt(0)), text.charCodeAt(1)), text.charCodeAt(2));
    const last = text.length - PREFIX_CHARS;
    for (let i = 0; i <= last; i++) {
      h = step(h, text.charCodeAt(i + 3));
      if (buckets[h] === 0) continue;
      const list = this.#byPrefix.get(text.slice(i, i + PREFIX_CHARS));
      if (list === undefined) continue;
      for (const form of list) {
        if (text.startsWith(form, i)) {
          into.push([i, i + form.length]);
          break;
        }
      }
    }
  }
}
