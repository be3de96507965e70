import type { DeploymentRecord } from '@org/workflow-compiler';
import { DEFAULT_LIMITS as ENGINE_DEFAULT_LIMITS } from '@org/workflow-engine';

/** Byte caps. */
export interface Limits {
  /** Largest package plaintext (`maxPlaintextBytes` for openPackage). */
  readonly maxPackageBytes: number;
  /** Largest JSON, text or octet-stream request body of an HTTP trigger. */
  readonly rawBodyBytes: number;
  /** Largest `body` part of a multipart upload. */
  readonly bodyFieldBytes: number;
  /** Largest outbound response body. */
  readonly outboundResponseBytes: number;
}

/** Time limits, in milliseconds. */
export interface Timeouts {
  readonly outboundMs: number;
  readonly headersMs: number;
  readonly requestMs: number;
  readonly shutdownMs: number;
  /** `AGENT_SCRIPT_TIME_MS`: time limit of one processor run in the sandbox (engine `limits.timeMs`). */
  readonly scriptMs: number;
  /** `AGENT_SPLIT_TIME_MS`: deadline of one run of a split-aggregate step (engine `limits.splitTimeMs`). */
  readonly splitMs: number;
}

const MiB = 1024 * 1024;

export const DEFAULT_LIMITS: Limits = {
  maxPackageBytes: 64 * MiB,
  rawBodyBytes: 1 * MiB,
  bodyFieldBytes: 1 * MiB,
  outboundResponseBytes: 10 * MiB,
};

export const DEFAULT_TIMEOUTS: Timeouts = {
  outboundMs: 30_000,
  headersMs: 20_000,
  requestMs: 600_000,
  shutdownMs: 10_000,
  scriptMs: ENGINE_DEFAULT_LIMITS.timeMs,
  splitMs: ENGINE_DEFAULT_LIMITS.splitTimeMs,
};

/**
 * The time limit of one processor run of a deployment: the record's `scriptTimeoutMs` (compiler SPEC.md §8.4, already
 * validated: an integer 1 … 600 000) wins over the runtime's `timeouts.scriptMs` (`AGENT_SCRIPT_TIME_MS`, else the
 * engine's 5 000 ms).
 */
export function scriptTimeMsOf(record: DeploymentRecord, timeouts: Pick<Timeouts, 'scriptMs'>): number {
  const own = record.scriptTimeoutMs;
  return typeof own === 'number' && Number.isInteger(own) && own > 0 ? own : timeouts.scriptMs;
}
