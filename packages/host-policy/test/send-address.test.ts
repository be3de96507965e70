import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AllowedCall, HostEntry } from '../src/index.js';
import { checkOutboundCall, compileHostPolicy, PolicyError, sendOutbound } from '../src/index.js';
import type { TestServer } from './fixtures.js';
import { fakeLookup, h1At, startServer } from './fixtures.js';

let server: TestServer;
beforeEach(async () => {
  server = await startServer();
});
afterEach(() => server.close());

const S39_ADDRESSES = [
  '127.0.0.1',
  '169.254.169.254',
  '10.0.0.5',
  '100.64.0.1',
  '::1',
  'fd00::1',
  '64:ff9b::a9fe:a9fe',
  '2002:a9fe:a9fe::',
  '::ffff:127.0.0.1',
];
const METADATA = [
  '169.254.169.254',
  '64:ff9b::a9fe:a9fe',
  '2002:a9fe:a9fe::',
  'fd00:ec2::254',
  '100.100.100.200',
];

function decide(entry: HostEntry, optIn: boolean): AllowedCall {
  const policy = compileHostPolicy([entry], { allowPrivateNetwork: optIn ? [entry.id] : [] });
  const d = checkOutboundCall(policy, { hostId: entry.id, path: 'users/42', method: 'GET' });
  if (!d.allowed) throw new Error(`expected allowed, got ${d.code}`);
  return d;
}

const opts = { maxResponseBytes: 1024, timeoutMs: 2000 };

describe('sendOutbound address policy', () => {
  it.each(S39_ADDRESSES)(
    'S39: refuses a name resolving to %s with POLICY_PRIVATE_ADDRESS and opens no connection',
    async (ip) => {
      const lookup = fakeLookup({ 'api.example.test': [ip] });
      const p = sendOutbound(decide(h1At(server.port), false), { ...opts, lookup });
      await expect(p).rejects.toThrowCode(PolicyError, 'POLICY_PRIVATE_ADDRESS');
      await p.catch((e: PolicyError) =>
        expect(e.details).toMatchObject({ hostId: 'h1', rule: 'address-policy' }),
      );
      expect(server.connections).toBe(0);
    },
  );

  it.each(METADATA)('S39: keeps the metadata address %s denied even with the opt-in', async (ip) => {
    const lookup = fakeLookup({ 'api.example.test': [ip] });
    const p = sendOutbound(decide(h1At(server.port), true), { ...opts, lookup });
    await expect(p).rejects.toThrowCode(PolicyError, 'POLICY_PRIVATE_ADDRESS');
    await p.catch((e: PolicyError) => expect(e.details).toMatchObject({ addressKind: 'metadata' }));
    expect(server.connections).toBe(0);
  });

  it.each(['127.0.0.1', '::ffff:127.0.0.1'])(
    'S39: reaches the loopback server through %s with the opt-in',
    async (ip) => {
      const lookup = fakeLookup({ 'api.example.test': [ip] });
      const res = await sendOutbound(decide(h1At(server.port), true), { ...opts, lookup });
      expect(res.status).toBe(200);
      expect(server.seen).toHaveLength(1);
    },
  );

  it('S39: checks every answer: one private address among several refuses the call', async () => {
    const lookup = fakeLookup({ 'api.example.test': ['127.0.0.1', '169.254.169.254'] });
    await expect(sendOutbound(decide(h1At(server.port), true), { ...opts, lookup })).rejects.toThrowCode(
      PolicyError,
      'POLICY_PRIVATE_ADDRESS',
    );
    const lookup2 = fakeLookup({ 'api.example.test': ['203.0.113.9', '10.0.0.1'] });
    await expect(
      sendOutbound(decide(h1At(server.port), true), { ...opts, lookup: lookup2 }),
    ).rejects.toThrowCode(PolicyError, 'POLICY_PRIVATE_ADDRESS');
    expect(server.connections).toBe(0);
  });

  it('S39: refuses an answer that is not an IP address', async () => {
    const lookup = () => Promise.resolve([{ address: 'localhost', family: 4 }]);
    await expect(sendOutbound(decide(h1At(server.port), true), { ...opts, lookup })).rejects.toThrowCode(
      PolicyError,
      'POLICY_PRIVATE_ADDRESS',
    );
  });

  it('S40: dials the checked address; a second answer for the same name is never used', async () => {
    const other = await startServer();
    try {
      let calls = 0;
      // First answer: the checked server; any later answer would point at a different loopback server.
      const lookup = (hostname: string) => {
        calls++;
        expect(hostname).toBe('api.example.test');
        return Promise.resolve([{ address: calls === 1 ? '127.0.0.1' : '127.0.0.2', family: 4 }]);
      };
      const entry = h1At(server.port);
      const res = await sendOutbound(decide(entry, true), { ...opts, lookup });
      expect(res.status).toBe(200);
      expect(calls).toBe(1);
      expect(server.seen).toHaveLength(1);
      expect(other.connections).toBe(0);
    } finally {
      await other.close();
    }
  });

  it('S40: a rebinding answer to loopback on a later call is refused without the opt-in', async () => {
    let calls = 0;
    const lookup = () =>
      Promise.resolve([{ address: ++calls === 1 ? '203.0.113.7' : '127.0.0.1', family: 4 }]);
    const d = decide(h1At(server.port), false);
    await expect(sendOutbound(d, { ...opts, lookup })).rejects.toThrowCode(
      PolicyError,
      'POLICY_PRIVATE_ADDRESS',
    );
    await expect(sendOutbound(d, { ...opts, lookup })).rejects.toThrowCode(
      PolicyError,
      'POLICY_PRIVATE_ADDRESS',
    );
    expect(server.connections).toBe(0);
  });

  it('S41: a host declared as http://2130706433/ is checked as 127.0.0.1: denied, then allowed with the opt-in', async () => {
    const entry: HostEntry = { id: 'lit', host: `http://2130706433:${server.port}/` };
    const lookup = fakeLookup({});
    const denied = checkOutboundCall(compileHostPolicy([entry]), { hostId: 'lit', path: 'x', method: 'GET' });
    expect(denied).toMatchObject({ allowed: false, code: 'POLICY_PRIVATE_ADDRESS', rule: 'address-policy' });
    const d = checkOutboundCall(compileHostPolicy([entry], { allowPrivateNetwork: ['lit'] }), {
      hostId: 'lit',
      path: 'x',
      method: 'GET',
    }) as AllowedCall;
    const res = await sendOutbound(d, { ...opts, lookup });
    expect(res.status).toBe(200);
    expect(server.seen[0]!.headers.host).toBe(`127.0.0.1:${server.port}`);
    expect(lookup.asked).toEqual([]);
  });

  it('S41: an IP-literal metadata host stays denied by sendOutbound even if the decision is forged', async () => {
    const policy = compileHostPolicy([{ id: 'm', host: 'http://169.254.169.254/' }], {
      allowPrivateNetwork: ['m'],
    });
    const host = policy.hosts.get('m')!;
    const forged: AllowedCall = {
      allowed: true,
      hostId: 'm',
      transport: 'http',
      url: 'http://169.254.169.254/latest',
      pathname: '/latest',
      search: '',
      method: 'GET',
      headers: {},
      droppedHeaders: [],
      host,
    };
    await expect(sendOutbound(forged, opts)).rejects.toThrowCode(PolicyError, 'POLICY_PRIVATE_ADDRESS');
  });
});
