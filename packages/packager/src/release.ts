import { RequestError, type FieldError } from './errors.js';
import type { ReleaseRequest } from './request-schemas.js';

// The release members of /workflow-package and /bootstrap-encrypt (`sequence`, `expiresAt`, `formatVersion`):
// judged here after the schema and before the keys are parsed, so a bad value is a 422 naming its field
// (REQUEST_FIELD_INVALID) whatever the keys hold, and turned into oapp-format's writer options.

/** The writer options of oapp-format for a release request. */
export interface ReleaseOptions {
  readonly createdAt: Date;
  readonly sequence?: number | undefined;
  readonly expiresAt?: Date | undefined;
  readonly formatVersion?: 1 | 2 | undefined;
}

function invalid(errors: FieldError[]): never {
  const first = errors[0]!;
  throw new RequestError('REQUEST_FIELD_INVALID', `body field ${first.pointer} ${first.detail}`, { errors });
}

/** `expiresAt` as a time: the schema's pattern admits 2026-02-30, which no calendar has. */
function expiryOf(text: string): Date | undefined {
  const at = new Date(text);
  if (Number.isNaN(at.getTime())) return undefined;
  // The only forms the pattern admits, with and without milliseconds, must name the same instant back.
  const iso = at.toISOString();
  return iso === text || iso === text.replace(/Z$/, '.000Z') ? at : undefined;
}

/**
 * Checks the release members of a validated `body` part. With `formatVersion` 1 a package has no sequence,
 * expiry or (for a bootstrap) signatures: each of those given is named. An `expiresAt` that is not a calendar time
 * is named too.
 * @param v1Refuses the other members `formatVersion` 1 excludes (`signers` of /bootstrap-encrypt).
 * @throws RequestError `REQUEST_FIELD_INVALID`.
 */
export function checkRelease(
  request: ReleaseRequest & Record<string, unknown>,
  v1Refuses: readonly string[] = [],
): void {
  const errors: FieldError[] = [];
  if (request.expiresAt !== undefined && expiryOf(request.expiresAt) === undefined)
    errors.push({ pointer: '/expiresAt', detail: 'is not a valid UTC time (YYYY-MM-DDTHH:MM:SS.sssZ)' });
  if (request.formatVersion === 1) {
    for (const name of ['sequence', 'expiresAt', ...v1Refuses]) {
      const value = request[name];
      if (value === undefined || (Array.isArray(value) && value.length === 0)) continue;
      errors.push({ pointer: `/${name}`, detail: 'is not allowed with formatVersion 1' });
    }
  }
  if (errors.length > 0) invalid(errors);
}

/**
 * The writer options of a checked release request, created now: an `expiresAt` that is not later than the
 * creation time is refused here (the package would be born expired).
 * @throws RequestError `REQUEST_FIELD_INVALID`.
 */
export function releaseOptions(request: ReleaseRequest, now: Date = new Date()): ReleaseOptions {
  const expiresAt = request.expiresAt === undefined ? undefined : expiryOf(request.expiresAt);
  if (expiresAt !== undefined && expiresAt.getTime() <= now.getTime())
    invalid([{ pointer: '/expiresAt', detail: 'must be later than the creation time of the package (now)' }]);
  return {
    createdAt: now,
    sequence: request.sequence,
    expiresAt,
    formatVersion: request.formatVersion,
  };
}
