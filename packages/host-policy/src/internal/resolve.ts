import { promises as dns } from 'node:dns';
import { classifyAddress, isAddressKindAllowed } from '../address.js';
import type { CompiledHost } from '../compile.js';
import { PolicyError } from '../errors.js';
import { isPlainObject } from './config-error.js';
import { ipFamily } from './ip.js';

/** One DNS answer. `family` is recomputed from the address; the resolver's claim is not trusted. */
export interface ResolvedAddress {
  readonly address: string;
  readonly family: 4 | 6;
}

/** Resolves a hostname to every address (like `dns.promises.lookup(h, { all: true })`). */
export type LookupFunction = (hostname: string) => Promise<readonly { address: string; family?: number }[]>;

/** The default resolver: the system resolver, all answers, in the order it returns them. */
export const systemLookup: LookupFunction = (hostname) => dns.lookup(hostname, { all: true, verbatim: true });

/** The abort reason as an Error (a caller may abort with anything). */
export function asError(reason: unknown): Error {
  return reason instanceof Error ? reason : new Error(String(reason));
}

function raceAbort<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(asError(signal.reason));
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

async function lookupAll(host: CompiledHost, hostname: string, lookup: LookupFunction, signal: AbortSignal) {
  const fail = (rule: string, cause?: unknown): never => {
    throw new PolicyError('POLICY_CONNECT_FAILED', `host ${host.id}: the host name did not resolve`, {
      cause,
      details: { hostId: host.id, rule },
    });
  };
  let answers: readonly { address: string; family?: number }[];
  try {
    answers = await raceAbort(
      Promise.resolve().then(() => lookup(hostname)),
      signal,
    );
  } catch (err) {
    if (signal.aborted) throw asError(signal.reason);
    return fail('dns', err);
  }
  if (!Array.isArray(answers) || answers.length === 0) return fail('dns-empty');
  return (answers as readonly unknown[]).map((a) =>
    isPlainObject(a) && typeof a['address'] === 'string' ? a['address'] : undefined,
  );
}

/**
 * Resolves the host (or takes its IP literal), checks EVERY address against the address policy and returns
 * the first one, which is the one the connection dials (SPEC.md §7.4: no second resolution, S40).
 *
 * @throws PolicyError POLICY_PRIVATE_ADDRESS when any address is not allowed; POLICY_CONNECT_FAILED when the
 * name does not resolve
 */
export async function resolveChecked(
  host: CompiledHost,
  lookup: LookupFunction,
  signal: AbortSignal,
): Promise<ResolvedAddress> {
  const base = host.base!;
  const bare = base.hostname.startsWith('[') ? base.hostname.slice(1, -1) : base.hostname;
  const addresses = base.literalKind === undefined ? await lookupAll(host, bare, lookup, signal) : [bare];
  for (const address of addresses) {
    const kind = typeof address === 'string' ? classifyAddress(address) : 'invalid';
    if (!isAddressKindAllowed(kind, host.allowPrivateNetwork)) {
      throw new PolicyError('POLICY_PRIVATE_ADDRESS', `host ${host.id}: resolved to a ${kind} address`, {
        details: { hostId: host.id, rule: 'address-policy', addressKind: kind },
      });
    }
  }
  const first = addresses[0] as string;
  return { address: first, family: ipFamily(first) as 4 | 6 };
}
