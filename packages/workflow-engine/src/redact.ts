/** What replaces a secret in errors and log lines the engine emits (security-requirements S50). */
export const REDACTED = '[REDACTED]';

/** Secrets shorter than this are registered with the host but not scrubbed from text (they would garble it). */
export const MIN_SCRUB_LENGTH = 4;

/** Per-engine set of secret values, scrubbed from engine errors and logs; also forwarded to the host. */
export class SecretSet {
  private readonly values = new Set<string>();
  /** Values long enough to scrub, longest first; rebuilt on the next scrub after an add. */
  private sorted: string[] | undefined;

  constructor(private readonly forward: (value: string) => void) {}

  /** Registers `value` and its Base64 forms (S50: neither may appear). */
  add(value: string): void {
    if (value === '' || this.values.has(value)) return;
    this.sorted = undefined;
    this.values.add(value);
    this.forward(value);
    const b64 = Buffer.from(value, 'utf8').toString('base64');
    for (const form of [b64, b64.replace(/=+$/, ''), Buffer.from(value, 'utf8').toString('base64url')]) {
      if (form.length < MIN_SCRUB_LENGTH || this.values.has(form)) continue;
      this.values.add(form);
      this.forward(form);
    }
  }

  /** Registers every string leaf of a parsed JSON value (restricted host data). */
  addLeaves(value: unknown, depth = 0): void {
    if (depth > 64) return;
    if (typeof value === 'string') this.add(value);
    else if (typeof value === 'number' && String(value).length >= MIN_SCRUB_LENGTH) this.add(String(value));
    else if (typeof value === 'object' && value !== null) {
      for (const v of Object.values(value)) this.addLeaves(v, depth + 1);
    }
  }

  /**
   * The first `max` characters of the scrubbed `text`, without scrubbing more of a huge text than needed: the
   * first cut keeps every secret that starts before `max` whole, so no part of one survives the final cut.
   */
  scrubPrefix(text: string, max: number): string {
    const longest = this.scrubbed()[0]?.length ?? 0;
    return this.scrub(text.slice(0, max + longest)).slice(0, max);
  }

  /** `text` with every registered value (longest first) replaced by {@link REDACTED}. */
  scrub(text: string): string {
    let out = text;
    for (const v of this.scrubbed()) out = out.split(v).join(REDACTED);
    return out;
  }

  private scrubbed(): string[] {
    this.sorted ??= [...this.values]
      .filter((v) => v.length >= MIN_SCRUB_LENGTH)
      .sort((a, b) => b.length - a.length);
    return this.sorted;
  }
}
