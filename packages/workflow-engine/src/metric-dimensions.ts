/**
 * The dimensions a processor's data adds to every metric it sends (SPEC.md §7, "Metric dimensions from data"):
 * the string entries of `data.metadata`, or — when the data declares no `metadata` object — the `ad` dimension
 * the reference agent derives from the anomaly-detection settings in `data.ad` (ADR 0133).
 */

/**
 * `data.ad` setting → the value of the `ad` dimension, as the reference's public resources document them
 * (opscotch/opscotch-community README, "Anomaly Detection settings"). Frozen, null-prototype: a setting named
 * `toString` finds nothing.
 */
export const ANOMALY_DETECTION_CODES: Readonly<Record<string, string>> = Object.freeze(
  Object.assign(Object.create(null) as Record<string, string>, {
    MEAN: 'ad_m',
    MEAN_HIGH: 'ad_mh',
    MEAN_LOW: 'ad_ml',
    MIN: 'ad_mn',
    MAX: 'ad_mx',
    DISTINCT: 'ad_dc',
    NON_ZERO: 'ad_nonz',
    ZERO: 'ad_z',
    VARIANCE_HIGH: 'ad_vh',
    VARIANCE_LOW: 'ad_low',
    VARIANCE: 'ad_v',
  }),
);

type Data = Readonly<Record<string, unknown>>;

const own = (o: object, k: string): unknown =>
  Object.prototype.hasOwnProperty.call(o, k) ? (o as Record<string, unknown>)[k] : undefined;

const isMap = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** The `ad` code for `key`: the first known setting of `data.ad[key]` (an array of names, or one name). */
function anomalyCode(ad: unknown, key: string): string | undefined {
  if (!isMap(ad)) return undefined;
  const settings = own(ad, key);
  const names = Array.isArray(settings) ? (settings as unknown[]) : [settings];
  for (const name of names) {
    if (typeof name !== 'string') continue;
    const code = ANOMALY_DETECTION_CODES[name];
    if (code !== undefined) return code;
  }
  return undefined;
}

/**
 * The dimensions `data` declares for a metric named `key` (before the explicit ones, which win, and before secrets
 * are stripped): with a `data.metadata` object, its string entries; without one, `ad` from `data.ad[key]` when that
 * names a known setting. The reference's public tests show both halves: a metric whose processor data has `ad` and no
 * `metadata` carries the `ad` dimension, while metrics whose data has both carry exactly the metadata (ADR 0133).
 */
export function declaredDimensions(data: Data, key: string): [string, string][] {
  const meta = own(data, 'metadata');
  if (isMap(meta)) return Object.entries(meta).filter((e): e is [string, string] => typeof e[1] === 'string');
  const code = anomalyCode(own(data, 'ad'), key);
  return code === undefined ? [] : [['ad', code]];
}
