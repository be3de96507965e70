import { encryptString, generateKeyPair, keyToHex, parseKeyTupleList } from '@org/envelope-crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { createStringDecryptor, type OutboundTransport, type TransportRequest } from '../src/index.js';
import { closeRuntimes, startRuntime, step, wf } from './helpers.js';

// Restricted host data through the real engine: docs/interfaces.md §3.3 (any host's `data`), §5.5, ADR 0081.

afterEach(closeRuntimes);

const packager = generateKeyPair('authenticated');
const agent = generateKeyPair('authenticated');
const candidates = parseKeyTupleList(`${keyToHex(packager.publicKey!)}/${keyToHex(agent.secretKey)}`);
const PLAIN = 'plain-host-api-key-6b1e';
const sealed = encryptString(new TextEncoder().encode(PLAIN), agent.publicKey!, packager.secretKey);

/** `api`: a plain host (no `authenticationHost`) whose data holds a `-2/` string; `other`: a second plain host. */
const record = {
  allowExternalHostAccess: [
    { id: 'api', host: 'https://api.example.com', data: { apiKey: sealed, region: 'north' } },
    { id: 'other', host: 'https://other.example.com' },
  ],
};

/** A step whose authenticationProcessor puts the api key of host `api` into a header of its call to `target`. */
const authed = (stepId: string, target: string) => ({
  stepId,
  authenticationProcessor: {
    script:
      "const d = JSON.parse(context.getRestrictedDataFromHost('api')); context.setHeader('X-Api-Key', d.apiKey); " +
      "console.log('auth read ' + d.apiKey + ' in ' + d.region);",
  },
  urlGenerator: { script: `context.setUrl('${target}', '/v1/items');` },
  resultsProcessor: { script: "console.log('status ' + context.getProperty('status_code'));" },
});

const workflow = wf(
  authed('to-api', 'api'),
  authed('to-other', 'other'),
  step('plain-read', "console.log(context.getRestrictedDataFromHost('api'));"),
);

async function start() {
  const seen: TransportRequest[] = [];
  const transport: OutboundTransport = (req) => {
    seen.push(req);
    return Promise.resolve({ status: 200, headers: {}, body: new Uint8Array() });
  };
  const decryptor = createStringDecryptor(candidates);
  const t = await startRuntime([{ id: 'd1', workflow, record }], { transport, decryptor });
  return { ...t, seen, decryptor };
}

describe('readRestrictedData through the engine (ADR 0081)', () => {
  it("gives an authenticationProcessor a plain host's data, decrypted at the call, redacted in every line", async () => {
    const t = await start();
    expect(t.decryptor.calls).toBe(0); // S49: nothing decrypted at load
    const r = await t.runtime.triggerStep('d1', 'to-api');
    expect(r?.errors).toEqual([]);
    expect(t.decryptor.calls).toBe(1);
    expect(t.seen.map((s) => [s.url, s.headers['x-api-key']])).toEqual([
      ['https://api.example.com/v1/items', PLAIN],
    ]);
    expect(t.logs('d1')).toContain('auth read <REDACTED> in <REDACTED>');
    const all = JSON.stringify(t.lines());
    expect(all).not.toContain(PLAIN);
    expect(all).not.toContain(sealed);
  });

  it("keeps a host's data to that host: the same header to another host is refused before the transport", async () => {
    const t = await start();
    const r = await t.runtime.triggerStep('d1', 'to-other');
    expect(r?.errored).toBe(true);
    expect(r?.errors.join('; ')).toContain('restricted host data to another host');
    expect(t.seen).toEqual([]);
    expect(JSON.stringify(t.lines())).not.toContain(PLAIN);
  });

  it('refuses the read outside authentication context and decrypts nothing (S49)', async () => {
    const t = await start();
    const r = await t.runtime.triggerStep('d1', 'plain-read');
    expect(r?.errored).toBe(true);
    expect(r?.errors.join('; ')).toContain('only available in an authentication context');
    expect(t.decryptor.calls).toBe(0);
  });
});
