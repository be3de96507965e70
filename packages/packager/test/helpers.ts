import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateKeyPair, keyToHex, type KeyPurpose } from '@org/envelope-crypto';
import { multipartForm, sampleWorkflow, writeSampleResources } from '@org/test-utils';
import { afterAll, beforeAll } from 'vitest';
import type { PackagerAnswer, PackagerCapability, PackagerDirs } from '../src/index.js';

/** A resource directory with one script and one includable workflow; a source directory with another workflow. */
export function makeDirs(): PackagerDirs {
  const res = writeSampleResources(mkdtempSync(join(tmpdir(), 'packager-lib-res-')));
  const sources = mkdtempSync(join(tmpdir(), 'packager-lib-src-'));
  writeFileSync(join(sources, 'only-here.workflow.json'), JSON.stringify(sampleWorkflow('only-here')));
  return { resourceDirs: [res], workflowSourceDirs: [sources] };
}

/** A small valid workflow; one processor uses the resource `/general/hello.js`. */
export { sampleWorkflow };

/** What the test server saw: every answer it wrote, by request id. */
export interface CapabilityServer {
  url: string;
  answers: Map<string, PackagerAnswer>;
  /** How the last request ended: read refused, or run. */
  phases: Map<string, 'read' | 'run'>;
}

/**
 * A node:http server on 127.0.0.1:0 serving every operation of `cap` at `/<operation>` as a host would: read →
 * run → wipe, a refused read answered with `answer`. The request id is the `x-request-id` header; an
 * `x-multipart-byte-limit` header is passed to `read` as the step's multipart cap.
 */
export function useCapabilityServer(
  cap: () => PackagerCapability,
  dirs: () => PackagerDirs,
): CapabilityServer {
  const ctx: CapabilityServer = { url: '', answers: new Map(), phases: new Map() };
  let server: Server;
  const write = (res: ServerResponse, a: PackagerAnswer): void => {
    res.writeHead(a.status, { ...a.headers, 'content-length': a.body.byteLength });
    res.end(a.body);
  };
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const id = String(req.headers['x-request-id'] ?? 'test-request');
    const operation = (req.url ?? '/').slice(1).split('?')[0]!;
    let answer: PackagerAnswer;
    try {
      const limit = req.headers['x-multipart-byte-limit'];
      const held = await cap().read(operation, req, dirs(), limit === undefined ? undefined : Number(limit));
      try {
        answer = await held.run(id);
      } finally {
        held.wipe();
      }
      ctx.phases.set(id, 'run');
    } catch (err) {
      answer = cap().answer(err, id);
      ctx.phases.set(id, 'read');
      // What a host does with a body it did not read: close the connection after the answer.
      answer = { ...answer, headers: { ...answer.headers, connection: 'close' } };
    }
    ctx.answers.set(id, answer);
    write(res, answer);
  };
  beforeAll(async () => {
    server = createServer((req, res) => void handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    ctx.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return ctx;
}

export interface TestKey {
  id: string;
  purpose: KeyPurpose;
  publicHex: string | null;
  secretHex: string;
}

/** A fresh key pair with an id. */
export function newKey(id: string, purpose: KeyPurpose): TestKey {
  const pair = generateKeyPair(purpose);
  return {
    id,
    purpose,
    publicHex: pair.publicKey === null ? null : keyToHex(pair.publicKey),
    secretHex: keyToHex(pair.secretKey),
  };
}

/** The request form of a key: `{id, purpose, type, keyHex}`. */
export function spec(k: TestKey, type: 'public' | 'secret', id = k.id) {
  return { id, purpose: k.purpose, type, keyHex: type === 'public' ? k.publicHex! : k.secretHex };
}

/** Keys for a package: a packager identity, two recipients, two signers. */
export function packageKeys() {
  return {
    packager: newKey('packager', 'authenticated'),
    alice: newKey('alice', 'authenticated'),
    bob: newKey('bob', 'authenticated'),
    author: newKey('author', 'sign'),
    ops: newKey('ops', 'sign'),
  };
}

/** A valid PackageRequest for {@link packageKeys}. */
export function packageRequest(k: ReturnType<typeof packageKeys>, extra: Record<string, unknown> = {}) {
  return {
    packageId: 'invoice-uploader',
    keys: [
      spec(k.packager, 'secret'),
      spec(k.alice, 'public'),
      spec(k.bob, 'public'),
      spec(k.author, 'secret'),
      spec(k.ops, 'secret'),
    ],
    signers: [
      { key: 'author', signText: 'release 1.0' },
      { key: 'ops', signText: 'reviewed' },
    ],
    encryptionKeys: ['alice', 'bob'],
    packagerIdentityPrivateKey: 'packager',
    ...extra,
  };
}

/** The body of an encrypt request: a packager identity and the named recipients. */
export function encryptBody(recipients: readonly TestKey[]) {
  const packager = newKey('packager', 'authenticated');
  return {
    packager,
    body: {
      keys: [spec(packager, 'secret'), ...recipients.map((r) => spec(r, 'public'))],
      encryptionKeys: recipients.map((r) => r.id),
      packagerIdentityPrivateKey: 'packager',
    },
  };
}

/** A multipart form with a `body` text part (a string as it is, anything else as JSON) and a `stream` file part. */
export function form(body: unknown, stream: string | Uint8Array): FormData {
  return multipartForm(body, stream, true);
}

/** A request with an id (`x-request-id`) and more headers. */
export function post(
  url: string,
  body: FormData | string | Uint8Array,
  id: string,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(url, { method: 'POST', body, headers: { 'x-request-id': id, ...headers } });
}

/** A JSON response body, typed loosely for assertions. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Body = any;
