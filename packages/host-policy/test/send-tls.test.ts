import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:https';
import type { Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AllowedCall } from '../src/index.js';
import { checkOutboundCall, compileHostPolicy, PolicyError, sendOutbound } from '../src/index.js';
import { fakeLookup } from './fixtures.js';

/** A throwaway self-signed certificate for api.example.test, made with openssl when it is installed. */
function makeCert(): { key: Buffer; cert: Buffer } | undefined {
  const dir = mkdtempSync(join(tmpdir(), 'host-policy-tls-'));
  try {
    const [key, cert] = [join(dir, 'key.pem'), join(dir, 'cert.pem')];
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        key,
        '-out',
        cert,
        '-days',
        '1',
        '-subj',
        '/CN=api.example.test',
      ],
      { stdio: 'ignore', input: '' },
    );
    return { key: readFileSync(key), cert: readFileSync(cert) };
  } catch {
    return undefined;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const tls = makeCert();
let server: Server;
let port = 0;
const servernames: string[] = [];
let requests = 0;

beforeAll(async () => {
  if (!tls) return;
  server = createServer(
    {
      ...tls,
      SNICallback: (name, cb) => {
        servernames.push(name);
        cb(null);
      },
    },
    (_req, res) => {
      requests++;
      res.end('secret');
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => (tls ? new Promise<void>((resolve) => server.close(() => resolve())) : undefined));

describe.skipIf(!tls)('sendOutbound over TLS', () => {
  it('sends the configured name as SNI and fails an untrusted certificate with POLICY_CONNECT_FAILED', async () => {
    const policy = compileHostPolicy([{ id: 'h1', host: `https://api.example.test:${port}/v1/` }], {
      allowPrivateNetwork: ['h1'],
    });
    const d = checkOutboundCall(policy, { hostId: 'h1', path: 'users/42', method: 'GET' }) as AllowedCall;
    const lookup = fakeLookup({ 'api.example.test': ['127.0.0.1'] });
    await expect(sendOutbound(d, { maxResponseBytes: 100, timeoutMs: 3000, lookup })).rejects.toThrowCode(
      PolicyError,
      'POLICY_CONNECT_FAILED',
    );
    expect(servernames).toEqual(['api.example.test']);
    expect(requests).toBe(0);
  });
});
