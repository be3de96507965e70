// Builds the page: src/page/main.ts and the libraries it imports, bundled for the browser by esbuild (ADR 0146),
// inlined with its style into one HTML file whose Content-Security-Policy allows exactly that script and that
// style and no connection. Writes dist/inspect.html, dist/inspect.js (the same bundle, to read and measure),
// dist/page-meta.json (CSP, hashes, sizes) and prints the bundle size.
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

// The libraries publish a browser build (package.json `exports` condition "browser": ESM, the noble engine, no
// Node built-in; ADR 0146), which esbuild takes for platform 'browser'. This guard fails the build if anything
// the page loads still names a Node built-in or sodium-native.
/** @type {import('esbuild').Plugin} */
const browserGuard = {
  name: 'browser-guard',
  setup(b) {
    b.onResolve({ filter: /^(node:|sodium-native$)/ }, (args) => ({
      errors: [{ text: `${args.path} has no browser build (imported by ${args.importer})` }],
    }));
  },
};

const result = await build({
  entryPoints: [join(root, 'src/page/main.ts')],
  bundle: true,
  write: false,
  format: 'iife',
  platform: 'browser',
  conditions: ['browser'],
  target: ['es2022', 'chrome111', 'firefox115', 'safari16'],
  minify: true,
  legalComments: 'none',
  plugins: [browserGuard],
  metafile: true,
  logLevel: 'warning',
});
// The guard's other half: every library file in the bundle comes from a browser build (dist/browser/), not from a
// Node entry that esbuild might have taken had a package lost its "browser" condition.
const nodeEntries = Object.keys(result.metafile.inputs).filter(
  (p) => /(^|\/)packages\/[^/]+\/dist\//.test(p) && !/\/dist\/browser\//.test(p),
);
if (nodeEntries.length > 0) {
  throw new Error(`inspect-page: the bundle took a Node entry instead of a browser build: ${nodeEntries.join(', ')}`);
}
// Inline: no "</script" may end the element early (esbuild's minified output keeps strings as they are).
const script = result.outputFiles[0].text.replace(/<\/script/gi, '<\\/script').trimEnd();
const style = readFileSync(join(root, 'src/page/style.css'), 'utf8').trimEnd();
const b64 = (s) => createHash('sha256').update(s, 'utf8').digest('base64');
const scriptHash = `sha256-${b64(script)}`;
const styleHash = `sha256-${b64(style)}`;
// The header form (served) and the meta form (the same page opened from the file system); frame-ancestors is
// not allowed in a meta policy.
const common = [
  "default-src 'none'",
  `script-src '${scriptHash}'`,
  `style-src '${styleHash}'`,
  "img-src 'none'",
  "connect-src 'none'",
  "font-src 'none'",
  "media-src 'none'",
  "object-src 'none'",
  "worker-src 'none'",
  "manifest-src 'none'",
  "form-action 'none'",
  "base-uri 'none'",
];
const metaCsp = common.join('; ');
const headerCsp = [...common, "frame-ancestors 'none'"].join('; ');
const template = readFileSync(join(root, 'src/page/index.html'), 'utf8');
const html = template
  .replace('%CSP%', () => metaCsp)
  .replace(/<!-- %STYLE%[^>]*-->/, () => `<style>${style}</style>`)
  .replace(/<!-- %SCRIPT%[^>]*-->/, () => `<script>${script}</script>`);
if (html.includes('%STYLE%') || html.includes('%SCRIPT%') || html.includes('%CSP%')) {
  throw new Error('inspect-page: a placeholder of src/page/index.html was left unfilled');
}
const dist = join(root, 'dist');
mkdirSync(dist, { recursive: true });
writeFileSync(join(dist, 'inspect.html'), html);
writeFileSync(join(dist, 'inspect.js'), `${script}\n`);
const htmlBytes = Buffer.byteLength(html);
const meta = {
  csp: headerCsp,
  scriptHash,
  styleHash,
  htmlSha256: createHash('sha256').update(html, 'utf8').digest('hex'),
  bundleBytes: Buffer.byteLength(script),
  bundleGzipBytes: gzipSync(script, { level: 9 }).length,
  htmlBytes,
  htmlGzipBytes: gzipSync(html, { level: 9 }).length,
  inputs: Object.keys(result.metafile.inputs).length,
};
writeFileSync(join(dist, 'page-meta.json'), `${JSON.stringify(meta, null, 2)}\n`);
const kib = (n) => `${(n / 1024).toFixed(1)} KiB`;
console.log(
  `inspect-page: bundle ${kib(meta.bundleBytes)} (${kib(meta.bundleGzipBytes)} gzip), inspect.html ${kib(htmlBytes)} (${kib(meta.htmlGzipBytes)} gzip), ${meta.inputs} modules`,
);
