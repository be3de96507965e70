import { badArgument } from '../host-args.js';

/**
 * Pairs sent as one text (the realm's write buffer, ADR 0066, 0121): the keys and then the values joined, with
 * their lengths in UTF-16 code units, two per pair (the key's, then the value's or -1 for null).
 */

/** Most pairs in one batch (the realm's write buffer flushes at 1000 pairs or 1 Mi characters). */
export const MAX_WRITE_BATCH = 1000;

/**
 * The lengths of a batch from the bytes the realm sent (little-endian 32-bit integers, as its Int32Array holds
 * them), checked against the text: at most {@link MAX_WRITE_BATCH} pairs, keys ≥ 0, values ≥ -1, and the lengths
 * adding up to the text exactly. The script can send any bytes on the raw channel.
 * @throws EngineError `ENGINE_BAD_ARGUMENT` when they are malformed.
 */
export function joinedLengths(bytes: unknown, text: string): Int32Array {
  if (!(bytes instanceof Uint8Array) || bytes.length % 8 !== 0 || bytes.length > 8 * MAX_WRITE_BATCH)
    throw badArgument(`setMany: expected the key and value lengths of at most ${MAX_WRITE_BATCH} pairs`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
  const lengths = new Int32Array(bytes.length / 4);
  let sum = 0;
  for (let i = 0; i < lengths.length; i++) {
    const n = view.getInt32(4 * i, true);
    if (n < -(i & 1)) throw badArgument('setMany: the lengths do not match the text');
    lengths[i] = n;
    if (n > 0) sum += n;
  }
  if (sum !== text.length) throw badArgument('setMany: the lengths do not match the text');
  return lengths;
}

/** The pairs of a batch whose lengths {@link joinedLengths} checked. */
export function joinedPairs(lengths: Int32Array, text: string): [string, string | null][] {
  const n = lengths.length >> 1;
  const out: [string, string | null][] = [];
  let at = 0;
  for (let i = 0; i < n; i++) out.push([text.slice(at, (at += lengths[2 * i]!)), null]);
  for (let i = 0; i < n; i++) {
    const len = lengths[2 * i + 1]!;
    if (len >= 0) out[i]![1] = text.slice(at, (at += len));
  }
  return out;
}
