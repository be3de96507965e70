/**
 * `context.packager()` on the host side (SPEC.md §7.6, ADR 0136): runs the request the host holds for this step run
 * and keeps its answer as the step's response. The request and the answer's headers and bytes never enter the
 * sandbox; the script learns the status and the problem code only.
 */
import { EngineError } from './errors.js';
import type { RunContext } from './run-context.js';
import type { PackagerRequest, PackagerResponse } from './types.js';

/** The held request of one step run and what became of it (shared by its processor runs and split items). */
export interface PackagerSlot {
  readonly request: PackagerRequest | undefined;
  /** Set once `context.packager()` was called: a second call is refused. */
  called: boolean;
  /** The answer, once the request ran: the step's response (step-runner.ts `toResult`). */
  answer: PackagerResponse | undefined;
}

/** What the script gets back. */
export interface PackagerView {
  status: number;
  code: string | null;
}

/** A problem code as the script may see it (the host's answer is not trusted to hold one). */
const CODE = /^[A-Z][A-Z0-9_]{0,63}$/;

/** A fresh slot for one step run (undefined request: the run has none). */
export function packagerSlot(request: PackagerRequest | undefined): PackagerSlot {
  return { request, called: false, answer: undefined };
}

function answerOf(r: unknown): PackagerResponse {
  const a = r as Partial<PackagerResponse> | null;
  const status = a?.status;
  if (
    typeof a !== 'object' ||
    a === null ||
    typeof status !== 'number' ||
    !Number.isInteger(status) ||
    status < 200 ||
    status > 599 ||
    !(a.body instanceof Uint8Array) ||
    typeof a.headers !== 'object' ||
    a.headers === null
  )
    throw new EngineError('ENGINE_OUTBOUND_FAILED', 'packager: the host gave no valid answer');
  const headers = Object.create(null) as Record<string, string>;
  for (const [k, v] of Object.entries(a.headers)) if (typeof v === 'string') headers[k.toLowerCase()] = v;
  const code = typeof a.code === 'string' && CODE.test(a.code) ? a.code : null;
  return { status, headers, body: a.body, code };
}

/**
 * The `packager` host call. Refused without the host's grant and in an authentication context
 * (`ENGINE_NOT_PERMITTED`), in a run with no held request and on a second call (`ENGINE_BAD_ARGUMENT`).
 */
export async function packagerCall(ctx: RunContext): Promise<PackagerView> {
  if (ctx.shared.host.packager !== true)
    throw new EngineError('ENGINE_NOT_PERMITTED', 'packager: this deployment has no packager access');
  if (ctx.isAuth)
    throw new EngineError('ENGINE_NOT_PERMITTED', 'packager: not available in an authentication context');
  const slot = ctx.packager;
  if (slot?.request === undefined)
    throw new EngineError('ENGINE_BAD_ARGUMENT', 'packager: this run holds no packager request');
  if (slot.called)
    throw new EngineError('ENGINE_BAD_ARGUMENT', 'packager: the request of this run was already run');
  slot.called = true;
  let raw: unknown;
  try {
    raw = await slot.request.run();
  } catch {
    // Nothing of the host's error reaches the script: its message may quote the request.
    throw new EngineError('ENGINE_OUTBOUND_FAILED', 'packager: the request failed');
  }
  const answer = answerOf(raw);
  slot.answer = answer;
  return { status: answer.status, code: answer.code };
}
