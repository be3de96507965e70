import { mkdtempSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateKeyPair, keyToHex, type KeyPurpose } from '@org/envelope-crypto';
import { multipartForm, sampleWorkflow, writeSampleResources } from '@org/test-utils';
import { afterAll, beforeAll } from 'vitest';
import { createApp } from '../src/app.js';
import { DEFAULT_LIMITS, DEFAULT_TIMEOUTS, type Limits } from '../src/config.js';
import { createLogger } from '../src/logger.js';
import { createHttpServer } from '../src/server.js';

/** A running app on 127.0.0.1:0 with its captured log lines. */
export interface TestServer {
  url: string;
  logs: string[];
  resourceDir: string;
  server: Server;
}

/** A resource directory with one script and one includable workflow. */
export function makeResourceDir(): string {
  return writeSampleResources(mkdtempSync(join(tmpdir(), 'packager-res-')));
}

/** Starts the app (createApp + createHttpServer) for the tests of one file. */
export function useServer(limits: Partial<Limits> = {}): TestServer {
  const ctx = { url: '', logs: [] as string[], resourceDir: '', server: undefined as unknown as Server };
  beforeAll(async () => {
    ctx.resourceDir = makeResourceDir();
    const log = createLogger((line) => ctx.logs.push(line));
    const app = createApp({ limits: { ...DEFAULT_LIMITS, ...limits }, resourceDirs: [ctx.resourceDir], log });
    ctx.server = createHttpServer(app, { ...DEFAULT_LIMITS, ...limits }, DEFAULT_TIMEOUTS, log);
    await new Promise<void>((resolve) => ctx.server.listen(0, '127.0.0.1', resolve));
    ctx.url = `http://127.0.0.1:${(ctx.server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    ctx.server.closeAllConnections();
    await new Promise((resolve) => ctx.server.close(resolve));
  });
  return ctx;
}

/** A small valid workflow; one processor uses a resource from the test resource dir. */
export { sampleWorkflow };

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
  return { id, purpose: k.purpose, type, keyHex: type === 'public' ? (k.publicHex as string) : k.secretHex };
}

/** Keys for a package: a packager identity, two recipients, two signers. */
export function packageKeys() {
  const packager = newKey('packager', 'authenticated');
  const alice = newKey('alice', 'authenticated');
  const bob = newKey('bob', 'authenticated');
  const author = newKey('author', 'sign');
  const ops = newKey('ops', 'sign');
  return { packager, alice, bob, author, ops };
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

/** A multipart form with a `body` text part and a `stream` file part. */
export const form = multipartForm;

/** POSTs a form and returns the response. */
export function postForm(url: string, fd: FormData, accept?: string): Promise<Response> {
  return fetch(url, { method: 'POST', body: fd, headers: accept === undefined ? {} : { accept } });
}

/** A JSON response body, typed loosely for assertions. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Body = any;

/** A problem body, typed loosely. */
export async function problem(res: Response): Promise<Body> {
  return (await res.json()) as Body;
}
