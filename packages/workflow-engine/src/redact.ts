import { FormIndex } from './form-index.js';

/**
 * What replaces a secret in logs, errors and results (docs/interfaces.md §5.5: `"this is <REDACTED>"`,
 * docs/security-requirements.md S50). Tests use this constant, never its text.
 */
export const REDACTED = '<REDACTED>';

/**
 * Forms shorter than this are not tracked: replacing every "eu" or "1" in every line would destroy the output
 * without hiding anything a guess could not find (ADR 0046).
 */
export const MIN_SECRET_CHARS = 4;

const utf8 = (s: string): Buffer => Buffer.from(s, 'utf8');
const jsonEscape = (s: string): string => JSON.stringify(s).slice(1, -1);

/**
 * The encoded forms of a secret the redactor tracks (ADR 0054). Each is what a workflow or a library commonly
 * turns a credential into before it ends up in a text: an `Authorization: Basic` value, a query string, a
 * form body, a JSON document logged as text.
 */
export const SECRET_FORMS: readonly { readonly name: string; readonly encode: (s: string) => string }[] =
  Object.freeze([
    { name: 'raw', encode: (s: string) => s },
    { name: 'Base64', encode: (s: string) => utf8(s).toString('base64') },
    { name: 'Base64 unpadded', encode: (s: string) => utf8(s).toString('base64').replace(/=+$/, '') },
    { name: 'Base64url', encode: (s: string) => utf8(s).toString('base64url') },
    // Lone surrogates make encodeURIComponent throw; such a secret has no URL-encoded form to track.
    { name: 'URL-encoded', encode: (s: string) => (s.isWellFormed() ? encodeURIComponent(s) : s) },
    { name: 'form-encoded', encode: (s: string) => new URLSearchParams([['', s]]).toString().slice(1) },
    { name: 'JSON-escaped', encode: jsonEscape },
    // A JSON text inside a JSON string (a logged request body that carries JSON): the secret escaped twice.
    { name: 'JSON-escaped twice', encode: (s: string) => jsonEscape(jsonEscape(s)) },
  ]);

/**
 * Most secret values registered through {@link Redactor.add} with `evictable: true` (the engine's per-run
 * registrations: header values and texts of authentication contexts) that are tracked at once. Past it the oldest
 * are forgotten, so a workflow registering a new value per request cannot grow memory and matching cost without
 * bound (ADR 0054, "Bounds"). Values the app registers (bootstrap secrets, decrypted strings) are never evicted.
 */
export const MAX_EVICTABLE_SECRETS = 4096;

/** Most passes {@link Redactor.strip} makes; a text still holding a form after them is dropped whole. */
const MAX_STRIP_PASSES = 8;

/**
 * The one redactor of engine and agent (ADR 0054). It tracks every registered secret in each of its
 * {@link SECRET_FORMS} and replaces them in text bound for logs, errors and results ({@link redact}) or removes
 * them from metric keys and dimensions ({@link strip}).
 *
 * Matching: one pass over the text with an index of the forms' prefixes ({@link FormIndex}, ADR 0068), whose
 * cost per character does not grow with the number of secrets; adding or evicting a value updates the index in
 * place. Every occurrence of every form is found, overlapping ones included, and each maximal run of
 * overlapping occurrences becomes one {@link REDACTED}, so no part of a secret survives next to another one.
 */
export class Redactor {
  /** Form → how many registered values produce it. */
  readonly #forms = new Map<string, number>();
  /** Registered value → its forms; pinned values are never evicted. */
  readonly #values = new Map<string, { forms: string[]; pinned: boolean }>();
  /** Evictable values, oldest first. */
  readonly #evictable = new Set<string>();
  readonly #index = new FormIndex();
  #longest = 0;

  /**
   * Registers `secret` in every tracked form. Values shorter than {@link MIN_SECRET_CHARS} (and forms that
   * short) are ignored. `evictable` values count against {@link MAX_EVICTABLE_SECRETS}. Returns true when a new
   * form was added.
   */
  add(secret: string, options: { evictable?: boolean } = {}): boolean {
    if (typeof secret !== 'string' || secret.length < MIN_SECRET_CHARS) return false;
    const known = this.#values.get(secret);
    if (known) {
      if (!options.evictable && !known.pinned) {
        known.pinned = true;
        this.#evictable.delete(secret);
      } else if (options.evictable && !known.pinned) {
        // Refreshed: it is the newest again.
        this.#evictable.delete(secret);
        this.#evictable.add(secret);
      }
      return false;
    }
    const forms = [...new Set(SECRET_FORMS.map(({ encode }) => encode(secret)))].filter(
      (f) => f.length >= MIN_SECRET_CHARS,
    );
    this.#values.set(secret, { forms, pinned: !options.evictable });
    let added = false;
    for (const form of forms) {
      const n = this.#forms.get(form) ?? 0;
      this.#forms.set(form, n + 1);
      if (n > 0) continue;
      added = true;
      this.#index.add(form);
      if (form.length > this.#longest) this.#longest = form.length;
    }
    if (options.evictable) {
      this.#evictable.add(secret);
      while (this.#evictable.size > MAX_EVICTABLE_SECRETS)
        this.#evict(this.#evictable.values().next().value!);
    }
    return added;
  }

  #evict(secret: string): void {
    this.#evictable.delete(secret);
    const entry = this.#values.get(secret);
    this.#values.delete(secret);
    for (const form of entry?.forms ?? []) {
      const n = (this.#forms.get(form) ?? 1) - 1;
      if (n > 0) {
        this.#forms.set(form, n);
        continue;
      }
      this.#forms.delete(form);
      this.#index.delete(form);
    }
  }

  /** Number of tracked forms. */
  get size(): number {
    return this.#forms.size;
  }

  /** `text` with every secret form replaced by {@link REDACTED}. */
  redact(text: string): string {
    return this.#replace(text, REDACTED);
  }

  /**
   * `text` with every secret form removed (metric keys and dimensions, docs/interfaces.md §5.5), and every
   * {@link REDACTED} an earlier redaction left in it (a metric built from a redacted result). Removal can join the
   * text around a removed form into a new occurrence (`se` + secret + `cret`), so it is repeated until nothing
   * changes; a text that still holds a form after {@link MAX_STRIP_PASSES} passes becomes empty.
   */
  strip(text: string): string {
    let out = text;
    for (let i = 0; i < MAX_STRIP_PASSES; i++) {
      const next = this.#replace(out, '').replaceAll(REDACTED, '');
      if (next === out) return out;
      out = next;
    }
    return this.#replace(out, '') === out && !out.includes(REDACTED) ? out : '';
  }

  /**
   * The first `max` characters of the redacted `text`, without redacting more of a huge text than needed: the
   * first cut keeps every secret that starts before `max` whole, so no part of one survives the final cut.
   */
  redactPrefix(text: string, max: number): string {
    return this.redact(text.slice(0, max + this.#longest)).slice(0, max);
  }

  #replace(text: string, by: string): string {
    if (this.#forms.size === 0 || text.length < MIN_SECRET_CHARS) return text;
    const found: [number, number][] = [];
    this.#index.occurrences(text, found);
    if (found.length === 0) return text; // the common case: one scan, no allocation
    let out = '';
    let copied = 0;
    let i = 0;
    while (i < found.length) {
      const start = found[i]![0];
      let end = found[i]![1];
      // Occurrences starting inside this run extend it.
      for (i++; i < found.length && found[i]![0] < end; i++) end = Math.max(end, found[i]![1]);
      out += text.slice(copied, start) + by;
      copied = end;
    }
    return out + text.slice(copied);
  }
}

/**
 * Values inside a received text shorter than this are not registered on their own: they are the words of the
 * protocol (`Bearer`, `error`, a scope), not credentials; the whole text still is (ADR 0054).
 */
export const MIN_LEAF_CHARS = 8;

/** Longer received texts are registered by their values only (a whole-text form that long is never logged). */
export const MAX_WHOLE_TEXT_CHARS = 16_384;

/**
 * The engine's registration point for secrets: every value goes into the {@link Redactor} the engine scrubs
 * with and, once, to the host (`EngineHost.registerSecret`), which derives the encoded forms itself.
 */
export class SecretSet {
  readonly #seen = new Set<string>();

  constructor(
    readonly redactor: Redactor,
    private readonly forward: (value: string) => void,
  ) {}

  /**
   * Registers `value` (S50: none of its tracked forms may appear). Values the engine registers while runs go on
   * are evictable (bounded by {@link MAX_EVICTABLE_SECRETS}); the host is told once per value it has not seen
   * recently.
   */
  add(value: string): void {
    if (value === '') return;
    this.redactor.add(value, { evictable: true });
    if (this.#seen.has(value)) return;
    this.#seen.add(value);
    if (this.#seen.size > MAX_EVICTABLE_SECRETS) this.#seen.delete(this.#seen.values().next().value!);
    this.forward(value);
  }

  /** Registers every string leaf (and number of 4+ digits) of a parsed JSON value (restricted host data). */
  addLeaves(value: unknown, depth = 0): void {
    if (depth > 64) return;
    if (typeof value === 'string') this.add(value);
    else if (typeof value === 'number' && String(value).length >= MIN_SECRET_CHARS) this.add(String(value));
    else if (typeof value === 'object' && value !== null) {
      for (const v of Object.values(value)) this.addLeaves(v, depth + 1);
    }
  }

  /**
   * Registers a text received in an authentication context (a login response, a cached credential): the whole
   * text (up to {@link MAX_WHOLE_TEXT_CHARS}) and every string value in it of at least {@link MIN_LEAF_CHARS}
   * characters — JSON leaves, or the values of a form-encoded text (`access_token=…&token_type=bearer`).
   */
  addText(text: string): void {
    if (text.length <= MAX_WHOLE_TEXT_CHARS) this.add(text);
    const leaf = (v: string): void => {
      if (v.length >= MIN_LEAF_CHARS) this.add(v);
    };
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      if (/^[^\s=&]+=[^\s&]*(&[^\s=&]+=[^\s&]*)*$/.test(text))
        for (const v of new URLSearchParams(text).values()) leaf(v);
      return;
    }
    const walk = (v: unknown, depth: number): void => {
      if (depth > 64) return;
      if (typeof v === 'string') leaf(v);
      else if (typeof v === 'object' && v !== null) for (const x of Object.values(v)) walk(x, depth + 1);
    };
    walk(parsed, 0);
  }

  /** See {@link Redactor.redactPrefix}. */
  scrubPrefix(text: string, max: number): string {
    return this.redactor.redactPrefix(text, max);
  }

  /** `text` with every registered value replaced by {@link REDACTED}. */
  scrub(text: string): string {
    return this.redactor.redact(text);
  }

  /** `text` with every registered value removed. */
  strip(text: string): string {
    return this.redactor.strip(text);
  }
}
