/**
 * Forms are indexed by chunks of this many UTF-16 units. Shorter forms cannot be indexed; the redactor tracks
 * none (its `MIN_SECRET_CHARS` is the same 4).
 */
const CHUNK = 4;

/**
 * Buckets of hashed first chunks: 2^20 one-byte counters (1 MiB, allocated at the first form). With the most
 * forms the redactor keeps (4 096 evictable values, 8 forms each) about 3 % of positions look further.
 */
const BUCKET_BITS = 20;
const BUCKET_MASK = (1 << BUCKET_BITS) - 1;

/** A node keeps at most this many longer forms in a list; one more turns the list into a map by next chunk. */
const LIST_MAX = 8;

/**
 * One step of the rolling bucket hash: each unit is shifted 5 bits further per step, so after four steps a unit
 * is shifted past the 20 kept bits and the value depends on the last four units only. The bucket of a first
 * chunk is four steps from 0; the scan takes one step per character.
 */
function step(h: number, unit: number): number {
  return ((h << 5) ^ unit) & BUCKET_MASK;
}

function bucketOf(form: string): number {
  let h = 0;
  for (let i = 0; i < CHUNK; i++) h = step(h, form.charCodeAt(i));
  return h;
}

/**
 * The forms below one node at depth `d` (their first `d` chunks are the path to it): those that end within the
 * next chunk, by their remainder (0 to 3 units), and the longer ones — a short list, longest first, or, past
 * {@link LIST_MAX}, child nodes by their next chunk. So a lookup compares at most a few remainders and
 * {@link LIST_MAX} forms per chunk of the text, however many forms share a prefix (`Bearer …` header values).
 */
interface Node {
  ends: Set<string>;
  longer: string[] | Map<string, Node>;
}

const newNode = (): Node => ({ ends: new Set(), longer: [] });
const isEmpty = (n: Node): boolean =>
  n.ends.size === 0 && (Array.isArray(n.longer) ? n.longer.length === 0 : n.longer.size === 0);

function insert(node: Node, form: string, depth: number): void {
  const at = depth * CHUNK;
  if (form.length < at + CHUNK) {
    node.ends.add(form.slice(at));
    return;
  }
  if (!Array.isArray(node.longer)) {
    const key = form.slice(at, at + CHUNK);
    let child = node.longer.get(key);
    if (!child) node.longer.set(key, (child = newNode()));
    insert(child, form, depth + 1);
    return;
  }
  if (node.longer.includes(form)) return;
  node.longer.push(form);
  node.longer.sort((x, y) => y.length - x.length);
  if (node.longer.length > LIST_MAX) {
    const forms = node.longer;
    node.longer = new Map();
    for (const f of forms) insert(node, f, depth);
  }
}

function remove(node: Node, form: string, depth: number): void {
  const at = depth * CHUNK;
  if (form.length < at + CHUNK) {
    node.ends.delete(form.slice(at));
    return;
  }
  if (Array.isArray(node.longer)) {
    const i = node.longer.indexOf(form);
    if (i >= 0) node.longer.splice(i, 1);
    return;
  }
  const key = form.slice(at, at + CHUNK);
  const child = node.longer.get(key);
  if (!child) return;
  remove(child, form, depth + 1);
  if (isEmpty(child)) node.longer.delete(key);
}

/** Length of the longest form below `node` (depth `depth`) that `text` holds at `start`; 0 when none. */
function longestAt(node: Node, text: string, start: number, depth: number): number {
  let best = 0;
  const at = start + depth * CHUNK;
  for (let r = Math.min(CHUNK - 1, text.length - at); r >= 0 && best === 0; r--)
    if (node.ends.has(text.slice(at, at + r))) best = depth * CHUNK + r;
  if (Array.isArray(node.longer)) {
    for (const form of node.longer) if (text.startsWith(form, start)) return form.length;
    return best;
  }
  if (text.length < at + CHUNK) return best;
  const child = node.longer.get(text.slice(at, at + CHUNK));
  const deeper = child ? longestAt(child, text, start, depth + 1) : 0;
  return deeper > 0 ? deeper : best;
}

/**
 * Every occurrence of a set of literal strings (the forms of the registered secrets) in one pass over a text,
 * whatever their number (ADR 0068). At each position a counter table of hashed first chunks says whether any
 * form may start there; only then is the trie of chunks ({@link Node}) walked. The cost per character does not
 * grow with the number of forms, unlike one regular-expression alternation over all of them, which tries each
 * alternative at each position.
 */
export class FormIndex {
  /** Nodes at depth 1, by first chunk. */
  readonly #roots = new Map<string, Node>();
  /** Per bucket: how many first chunks hash to it (sticky at 255: then only slower, never wrong). */
  #buckets: Uint8Array | undefined;

  /** Adds `form` (at least four UTF-16 units; shorter ones are ignored). */
  add(form: string): void {
    if (form.length < CHUNK) return;
    const key = form.slice(0, CHUNK);
    let root = this.#roots.get(key);
    if (!root) {
      this.#roots.set(key, (root = newNode()));
      this.#buckets ??= new Uint8Array(1 << BUCKET_BITS);
      const b = bucketOf(form);
      if (this.#buckets[b]! < 0xff) this.#buckets[b]!++;
    }
    insert(root, form, 1);
  }

  /** Removes `form`. */
  delete(form: string): void {
    const key = form.slice(0, CHUNK);
    const root = this.#roots.get(key);
    if (!root) return;
    remove(root, form, 1);
    if (!isEmpty(root)) return;
    this.#roots.delete(key);
    const b = bucketOf(form);
    if (this.#buckets![b]! < 0xff) this.#buckets![b]!--;
  }

  /**
   * Appends `[start, end)` of the longest form starting at each position of `text` where one starts, in order
   * of start (occurrences may overlap).
   */
  occurrences(text: string, into: [number, number][]): void {
    const buckets = this.#buckets;
    if (buckets === undefined || this.#roots.size === 0 || text.length < CHUNK) return;
    let h = step(step(step(0, text.charCodeAt(0)), text.charCodeAt(1)), text.charCodeAt(2));
    const last = text.length - CHUNK;
    for (let i = 0; i <= last; i++) {
      h = step(h, text.charCodeAt(i + 3));
      if (buckets[h] === 0) continue;
      const root = this.#roots.get(text.slice(i, i + CHUNK));
      if (root === undefined) continue;
      const n = longestAt(root, text, i, 1);
      if (n > 0) into.push([i, i + n]);
    }
  }
}
