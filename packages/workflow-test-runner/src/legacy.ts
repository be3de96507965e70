/** A field that real test suites still carry but that no longer does what it did, reported once per field. */
export interface LegacyNotice {
  /** The field, e.g. `license` or `mockEndpointResponses[].toThisRoute`. */
  field: string;
  /** What the runner does with it now. */
  message: string;
  /** Every file (display name) that used it, in the order seen. */
  files: string[];
}

/** The fixed wording per legacy field, so the command line says the same thing every time. */
export const LEGACY_MESSAGES: Readonly<Record<string, string>> = Object.freeze({
  license: 'ignored: the runner needs no licence file',
  'theseMetricsShouldHaveBeenSent[].toThisRoute':
    'ignored: metrics are matched by key, value, timestamp and dimensionMap; the route is not checked',
  testThisRoute: 'read as testThisStep: rename it',
  ignored: 'read as ignore: rename it',
  enabled: 'still honoured (false skips the test): prefer "ignore": true',
});

/** Adds `file` to the notice for `field`, creating it on first use. */
export function noteLegacy(notices: LegacyNotice[], field: string, file: string): void {
  const found = notices.find((n) => n.field === field);
  if (found === undefined)
    notices.push({ field, message: LEGACY_MESSAGES[field] ?? 'legacy field', files: [file] });
  else if (!found.files.includes(file)) found.files.push(file);
}

/**
 * Merges notices from several files into one per field (files in first-seen order), so the command line can say
 * once what each legacy field no longer does.
 *
 * @param lists - notices as collected per config or test file.
 */
export function mergeLegacyNotices(lists: readonly (readonly LegacyNotice[])[]): LegacyNotice[] {
  const out: LegacyNotice[] = [];
  for (const list of lists) for (const n of list) for (const f of n.files) noteLegacy(out, n.field, f);
  return out;
}
