/** Bounds of every `tcp` trigger server (ADR 0080). */
export interface TcpLimits {
  /** Largest message in bytes (delimiter not counted); a longer one closes the connection. */
  readonly maxFrameBytes: number;
  /**
   * Bytes read from one connection and not yet handed to a step run (queued messages plus a partial one);
   * at this level the connection stops reading until runs catch up (TCP backpressure reaches the client).
   */
  readonly maxQueuedBytes: number;
  /** Open connections per server; further ones are closed at accept. */
  readonly maxConnections: number;
  /** A connection that sends nothing for this long, with nothing queued or running, is closed (ms). */
  readonly idleMs: number;
  /** Step runs in flight per server (each connection runs one batch at a time, in order). */
  readonly runsInFlight: number;
}

const MiB = 1024 * 1024;

export const DEFAULT_TCP_LIMITS: TcpLimits = Object.freeze({
  maxFrameBytes: 1 * MiB,
  maxQueuedBytes: 2 * MiB,
  maxConnections: 64,
  idleMs: 60_000,
  runsInFlight: 2,
});

/**
 * The defaults with `overrides` applied.
 * @throws RangeError for a value that is not a positive safe integer, or `maxQueuedBytes < maxFrameBytes`.
 */
export function tcpLimitsOf(overrides: Partial<TcpLimits> | undefined): TcpLimits {
  const out = { ...DEFAULT_TCP_LIMITS, ...overrides };
  for (const [k, v] of Object.entries(out)) {
    if (!Number.isSafeInteger(v) || v <= 0)
      throw new RangeError(`tcp.${k} must be a positive integer, got ${String(v)}`);
  }
  if (out.maxQueuedBytes < out.maxFrameBytes)
    throw new RangeError('tcp.maxQueuedBytes must be at least tcp.maxFrameBytes');
  return Object.freeze(out);
}
