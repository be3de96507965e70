import { sendJson, type TableHandler } from './plain-http.js';

/** Where the service is in its life: `ready` only between listening and the start of a drain. */
export type ReadinessState = 'starting' | 'ready' | 'draining';

/** The readiness of the process, set by main.ts and read by GET /ready. */
export class Readiness {
  #state: ReadinessState;
  constructor(initial: ReadinessState = 'starting') {
    this.#state = initial;
  }
  get state(): ReadinessState {
    return this.#state;
  }
  set(state: ReadinessState): void {
    this.#state = state;
  }
}

/** GET /ready: 200 `{ok:true,status:"ready"}`, else 503 with the state (load balancers stop sending work). */
export function readyRoute(readiness: Readiness): TableHandler {
  return (_req, res) => {
    const status = readiness.state;
    res.setHeader('Cache-Control', 'no-store');
    sendJson(res, { ok: status === 'ready', status }, status === 'ready' ? 200 : 503);
  };
}
