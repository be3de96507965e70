/** What replaces a secret in log and metric text (security-requirements S50). */
export const REDACTED = '[REDACTED]';

/**
 * Secrets shorter than this are not tracked: replacing every "eu" or "1" in every log line would destroy
 * the logs without protecting anything a guess could not find. Documented in ADR 0046.
 */
export const MIN_SECRET_CHARS = 4;

function base64Forms(value: string): string[] {
  const b64 = Buffer.from(value, 'utf8').toString('base64');
  const unpadded = b64.replace(/=+$/, '');
  const url = unpadded.replaceAll('+', '-').replaceAll('/', '_');
  return [b64, unpadded, url];
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Replaces every registered secret, and its Base64, Base64url and URL-encoded forms, in text bound for
 * logs and metrics (ADR 0046). Longer forms are matched first, so a secret inside another is still covered.
 */
export class Redactor {
  readonly #forms = new Set<string>();
  #pattern: RegExp | undefined;

  /** Registers a secret (restricted host data, fixed header values, decrypted strings). */
  add(secret: string): void {
    if (typeof secret !== 'string' || secret.length < MIN_SECRET_CHARS) return;
    const before = this.#forms.size;
    for (const form of [secret, encodeURIComponent(secret), ...base64Forms(secret)]) {
      if (form.length >= MIN_SECRET_CHARS) this.#forms.add(form);
    }
    if (this.#forms.size !== before) this.#pattern = undefined;
  }

  /** Number of tracked forms (for tests). */
  get size(): number {
    return this.#forms.size;
  }

  /** `text` with every secret form replaced by {@link REDACTED}. */
  redact(text: string): string {
    return this.#replace(text, REDACTED);
  }

  /** `text` with every secret form removed (metric keys and dimensions, interfaces.md §5.5). */
  strip(text: string): string {
    return this.#replace(text, '');
  }

  #replace(text: string, by: string): string {
    if (this.#forms.size === 0) return text;
    this.#pattern ??= new RegExp(
      [...this.#forms]
        .sort((a, b) => b.length - a.length)
        .map(escapeRegExp)
        .join('|'),
      'g',
    );
    return text.replace(this.#pattern, by);
  }
}
