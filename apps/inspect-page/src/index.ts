// Serving the inspection page (dist/inspect.html): its bytes, the headers it must be served with, and a handler for
// node:http (which Express hands its routes too). The page is static: no server-side code runs for it.
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';

interface PageMeta {
  readonly csp: string;
  readonly htmlSha256: string;
  readonly bundleBytes: number;
  readonly bundleGzipBytes: number;
}

let loaded: { html: Uint8Array; meta: PageMeta } | undefined;

function load(): { html: Uint8Array; meta: PageMeta } {
  loaded ??= {
    html: new Uint8Array(readFileSync(new URL('../dist/inspect.html', import.meta.url))),
    meta: JSON.parse(readFileSync(new URL('../dist/page-meta.json', import.meta.url), 'utf8')) as PageMeta,
  };
  return loaded;
}

/** The page: one self-contained HTML file (its script and style inline). */
export function inspectPageHtml(): Uint8Array {
  return load().html;
}

/**
 * The Content-Security-Policy the page is served with: its one inline script and one inline style by hash,
 * nothing else; `connect-src 'none'` (no fetch, XHR, WebSocket or beacon), no form target, no framing.
 */
export function inspectPageCsp(): string {
  return load().meta.csp;
}

/** The page's strong ETag (SHA-256 of its bytes). */
export function inspectPageEtag(): string {
  return `"${load().meta.htmlSha256}"`;
}

/** The response headers of the page (a 200 or 304 answer). */
export function inspectPageHeaders(): Record<string, string> {
  return {
    'Content-Type': 'text/html; charset=utf-8',
    'Content-Security-Policy': inspectPageCsp(),
    'X-Content-Type-Options': 'nosniff',
    'X-Frame-Options': 'DENY',
    'Referrer-Policy': 'no-referrer',
    'Cross-Origin-Opener-Policy': 'same-origin',
    'Cross-Origin-Resource-Policy': 'same-origin',
    // Cached, but revalidated: a new build is seen at once (the ETag changes), an unchanged one costs a 304.
    'Cache-Control': 'no-cache',
    ETag: inspectPageEtag(),
  };
}

/** What to answer to a request for the page, independent of the server framework. */
export interface PageAnswer {
  readonly status: 200 | 304 | 405;
  readonly headers: Record<string, string>;
  readonly body: Uint8Array;
}

/**
 * The answer to `method` with the request's `If-None-Match` header: GET and HEAD get the page (HEAD without a
 * body; 304 when the ETag matches), anything else 405 with `Allow: GET, HEAD`.
 */
export function inspectPageAnswer(method: string, ifNoneMatch?: string): PageAnswer {
  if (method !== 'GET' && method !== 'HEAD') {
    return {
      status: 405,
      headers: {
        Allow: 'GET, HEAD',
        'Content-Type': 'text/plain; charset=utf-8',
        'X-Content-Type-Options': 'nosniff',
      },
      body: new TextEncoder().encode('405 method not allowed: the page answers GET and HEAD\n'),
    };
  }
  const headers = inspectPageHeaders();
  const etag = headers['ETag']!;
  const matches =
    ifNoneMatch !== undefined && ifNoneMatch.split(',').some((t) => t.trim() === etag || t.trim() === '*');
  if (matches) return { status: 304, headers, body: new Uint8Array(0) };
  const html = inspectPageHtml();
  return {
    status: 200,
    headers: { ...headers, 'Content-Length': String(html.byteLength) },
    body: method === 'HEAD' ? new Uint8Array(0) : html,
  };
}

/** A node:http (and Express) handler for the page's route. */
export function serveInspectPage(req: IncomingMessage, res: ServerResponse): void {
  const inm = req.headers['if-none-match'];
  const a = inspectPageAnswer(req.method ?? 'GET', Array.isArray(inm) ? inm.join(',') : inm);
  res.writeHead(a.status, a.headers);
  res.end(a.body);
}
