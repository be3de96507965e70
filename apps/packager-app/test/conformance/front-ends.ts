// The one pair of front-ends of conformance.test.ts, shared by the modules it runs (table.ts, cross-open.ts, s159.ts):
// started once for the file (vitest isolates each test file, so every module of one file sees the same servers).
import { useFrontEnds } from './harness.js';

export const f = useFrontEnds();
