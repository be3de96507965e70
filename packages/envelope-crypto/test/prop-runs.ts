import { vi } from 'vitest';

const SLOW = Boolean(process.env['SLOW']);

/** fast-check run count: small by default, large under SLOW=1 (docs/engineering.md §3). */
export const NUM_RUNS = SLOW ? 1000 : 30;

// The pure-JS engine costs about a millisecond per Ed25519/X25519 operation; under SLOW=1 the
// properties run for minutes on a small machine, so each property file gets room for that.
vi.setConfig({ testTimeout: SLOW ? 600_000 : 20_000 });
