// The conformance suite over both front-ends of the packager (the Express service and the agent hosting the built
// packager.oapp), started once for this file (front-ends.ts). Each module below registers its part:
//   table.ts       one table of requests: the same status, headers and bytes for every deterministic answer
//                  (good requests and the Express tests' refusals), and the agent's own 404 for paths no step serves
//   cross-open.ts  packages, bootstraps, -2/ strings and keys made by either front-end open with the other's tools
//   s159.ts        S159: resources leaving the granted directory, refused as the Express service refuses them
// S160 (uploads, with a short request timeout on both) is s160.test.ts; S174 (caller tokens on both) is s174.test.ts.
import './front-ends.js';
import './table.js';
import './cross-open.js';
import './s159.js';
