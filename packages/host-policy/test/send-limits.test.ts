import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AllowedCall } from '../src/index.js';
import { checkOutboundCall, compileHostPolicy, PolicyError, sendOutbound } from '../src/index.js';
import type { TestServer } from './fixtures.js';
import { fakeLookup, h1At, startServer } from './fixtures.js';

const GIB = 1024 ** 3;
const CHUNK = Buffer.alloc(64 * 1024, 0x61);
let server: TestServer;
let bytesWritten = 0;

beforeEach(async () => {
  bytesWritten = 0;
  server = await startServer((req, res) => {
    const size = Number(/\/v1\/size\/(\d+)/.exec(req.url ?? '')?.[1] ?? -1);
    if (size >= 0) return res.end(Buffer.alloc(size, 0x62));
    if (req.url === '/v1/declared') {
      res.setHeader('content-length', String(GIB));
      return res.write(CHUNK);
    }
    // A 1 GiB body without Content-Length, written as fast as the client reads it.
    const pump = () => {
      while (bytesWritten < GIB && !res.destroyed) {
        bytesWritten += CHUNK.length;
        if (!res.write(CHUNK)) return res.once('drain', pump);
      }
      res.end();
    };
    res.on('close', () => res.destroy());
    pump();
  });
});
afterEach(() => server.close());

function decide(path: string): AllowedCall {
  const policy = compileHostPolicy([h1At(server.port, { allowList: undefined })], {
    allowPrivateNetwork: ['h1'],
  });
  return checkOutboundCall(policy, { hostId: 'h1', path, method: 'GET' }) as AllowedCall;
}

const lookup = fakeLookup({ 'api.example.test': ['127.0.0.1'] });

describe('sendOutbound response cap', () => {
  it('S43: aborts a 1 GiB streamed body at the cap with POLICY_RESPONSE_TOO_LARGE, memory bounded', async () => {
    const before = process.memoryUsage().rss;
    const p = sendOutbound(decide('huge'), { maxResponseBytes: 1 << 20, timeoutMs: 10_000, lookup });
    await expect(p).rejects.toThrowCode(PolicyError, 'POLICY_RESPONSE_TOO_LARGE');
    await p.catch((e: PolicyError) =>
      expect(e.details).toMatchObject({ hostId: 'h1', rule: 'response-size' }),
    );
    expect(bytesWritten).toBeLessThan(64 * 1024 * 1024);
    expect(process.memoryUsage().rss - before).toBeLessThan(128 * 1024 * 1024);
  });

  it('S43: refuses a declared Content-Length above the cap before reading the body', async () => {
    await expect(
      sendOutbound(decide('declared'), { maxResponseBytes: 1 << 20, timeoutMs: 5000, lookup }),
    ).rejects.toThrowCode(PolicyError, 'POLICY_RESPONSE_TOO_LARGE');
  });

  it('S43: exactly maxResponseBytes passes, one more fails; the next call succeeds', async () => {
    const ok = await sendOutbound(decide('size/1000'), { maxResponseBytes: 1000, timeoutMs: 5000, lookup });
    expect(ok.body.byteLength).toBe(1000);
    expect(ok.body).toBeInstanceOf(Uint8Array);
    expect(ok.body.buffer.byteLength).toBe(1000); // its own buffer, never a view of Node's shared pool
    const small = await sendOutbound(decide('size/3'), { maxResponseBytes: 1000, timeoutMs: 5000, lookup });
    expect([small.body.byteOffset, small.body.buffer.byteLength]).toEqual([0, 3]);
    await expect(
      sendOutbound(decide('size/1001'), { maxResponseBytes: 1000, timeoutMs: 5000, lookup }),
    ).rejects.toThrowCode(PolicyError, 'POLICY_RESPONSE_TOO_LARGE');
    const empty = await sendOutbound(decide('size/0'), { maxResponseBytes: 0, timeoutMs: 5000, lookup });
    expect(empty.body.byteLength).toBe(0);
  });
});
