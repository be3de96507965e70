import type { DeploymentRecord } from '@org/workflow-compiler';

/** A `call` entry of `allowDeploymentAccess`: which deployments this one may call through it. */
export interface CallGrant {
  readonly id: string;
  /** `deploymentIds`, or the legacy single `deploymentId`, in the order given. */
  readonly targets: readonly string[];
  /** How long a call waits for a target that is still being loaded (`deferLoading`); undefined: as long as that takes. */
  readonly startupWaitTimeoutMs: number | undefined;
}

/** A `receive` entry: which deployments may call this one through it. */
export interface ReceiveGrant {
  readonly id: string;
  readonly anyDeployment: boolean;
  readonly from: ReadonlySet<string>;
}

/** The `allowDeploymentAccess` entries of one record, by id and kind. */
export interface Grants {
  readonly call: ReadonlyMap<string, CallGrant>;
  readonly receive: ReadonlyMap<string, ReceiveGrant>;
}

type Entry = Record<string, unknown>;

const isTrue = (v: unknown): boolean => v === true || v === 'true';

function idsOf(e: Entry): string[] {
  const list = Array.isArray(e['deploymentIds']) ? (e['deploymentIds'] as unknown[]) : [];
  const ids = list.filter((x): x is string => typeof x === 'string');
  if (typeof e['deploymentId'] === 'string' && !ids.includes(e['deploymentId'])) ids.push(e['deploymentId']);
  return ids;
}

/**
 * The grants of a validated record (the bootstrap schema has checked the entry shapes: `access` is `call` or
 * `receive`, `anyDeployment` only on `receive` and without ids, `startupWaitTimeoutMs` only on `call`).
 */
export function grantsOf(record: DeploymentRecord): Grants {
  const call = new Map<string, CallGrant>();
  const receive = new Map<string, ReceiveGrant>();
  for (const raw of record.allowDeploymentAccess ?? []) {
    const e = raw as Entry;
    const id = e['id'] as string;
    if (e['access'] === 'call') {
      const wait = e['startupWaitTimeoutMs'];
      call.set(id, {
        id,
        targets: idsOf(e),
        startupWaitTimeoutMs: typeof wait === 'number' ? wait : undefined,
      });
    } else if (e['access'] === 'receive') {
      receive.set(id, { id, anyDeployment: isTrue(e['anyDeployment']), from: new Set(idsOf(e)) });
    }
  }
  return { call, receive };
}

/** True when the receive entry lets `callerId` in: the caller is listed, or the entry takes any deployment. */
export function admits(grant: ReceiveGrant, callerId: string): boolean {
  return grant.anyDeployment || grant.from.has(callerId);
}

/** The receive entries of `grants` that let `callerId` in. */
export function receivingFrom(grants: Grants, callerId: string): ReceiveGrant[] {
  return [...grants.receive.values()].filter((g) => admits(g, callerId));
}

/** `startupPriority` of a record as a number (absent or not a finite number: 0). */
function priorityOf(record: DeploymentRecord): number {
  const p = record['startupPriority'];
  return typeof p === 'number' && Number.isFinite(p) ? p : 0;
}

/** The deployments in start-up order: lower `startupPriority` first, ties in bootstrap order. */
export function startupOrder<T extends { readonly record: DeploymentRecord }>(list: readonly T[]): T[] {
  return list
    .map((d, i) => ({ d, i, p: priorityOf(d.record) }))
    .sort((a, b) => a.p - b.p || a.i - b.i)
    .map((x) => x.d);
}

/** True when the record asks for `deferLoading` (its engine is created on first use). */
export function isDeferred(record: DeploymentRecord): boolean {
  return isTrue(record['deferLoading']);
}

/** True when the record grants the packager capability (`allowPackagerAccess`, compiler SPEC.md §8.5, ADR 0136). */
export function packagerGranted(record: DeploymentRecord): boolean {
  return isTrue(record.allowPackagerAccess);
}
