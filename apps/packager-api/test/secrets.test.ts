import { decodeHex, encodeBase64 } from '@org/envelope-crypto';
import { describe, expect, it } from 'vitest';
import {
  form,
  newKey,
  packageKeys,
  packageRequest,
  postForm,
  sampleWorkflow,
  spec,
  useServer,
  type Body,
} from './helpers.js';

const srv = useServer({ workflowBytes: 16 * 1024 });

/** Every textual form a secret could leak in: hex (both cases) and Base64 of its bytes. */
function forms(hex: string): string[] {
  return [hex.toLowerCase(), hex.toUpperCase(), encodeBase64(decodeHex(hex, hex.length / 2))];
}

describe('secret keys never appear in responses or logs', () => {
  it('for successful and failing requests of every kind', async () => {
    const k = packageKeys();
    const secrets = [k.packager, k.alice, k.author, k.ops].flatMap((x) => forms(x.secretHex));
    const seen: string[] = [];
    const wf = JSON.stringify(sampleWorkflow());
    const upper = packageRequest(k);
    upper.keys = upper.keys.map((x) => ({ ...x, keyHex: x.keyHex.toUpperCase() }));
    const cases: FormData[] = [
      form(packageRequest(k), wf),
      form(upper, wf),
      form(packageRequest(k, { encryptionKeys: ['author'] }), wf),
      form(packageRequest(k, { encryptionKeys: ['nobody'] }), wf),
      form(
        {
          ...packageRequest(k),
          keys: [{ ...spec(k.author, 'secret'), keyHex: k.author.secretHex.slice(0, 126) }],
        },
        wf,
      ),
      form(
        {
          ...packageRequest(k),
          keys: [{ ...spec(k.author, 'secret'), keyHex: k.author.secretHex.slice(0, 64) + k.ops.publicHex }],
        },
        wf,
      ),
      form({ ...packageRequest(k), keys: [{ ...spec(k.packager, 'secret'), purpose: 'sign' }] }, wf),
      form({ ...packageRequest(k), keyz: 1 }, wf),
      form(packageRequest(k), new Uint8Array(16 * 1024 + 1)),
      form(packageRequest(k), '{"workflows":'),
    ];
    for (const fd of cases) {
      const res = await postForm(`${srv.url}/workflow-package`, fd);
      const text = res.headers.get('content-type')?.startsWith('application/octet-stream')
        ? ''
        : await res.text();
      seen.push(text, JSON.stringify([...res.headers]));
    }
    const keyGen = await fetch(`${srv.url}/key-gen?purpose=sign`);
    const generated = ((await keyGen.json()) as Body).keyPair.secretKeyHex as string;
    const logs = srv.logs.join('');
    expect(logs.length).toBeGreaterThan(0);
    for (const secret of [...secrets, ...forms(generated)]) {
      expect(logs).not.toContain(secret);
      for (const s of seen) expect(s).not.toContain(secret);
    }
    // One JSON line per request, with the documented fields only.
    const lines = srv.logs.map((l) => JSON.parse(l));
    const requestLines = lines.filter((l) => l.msg === 'request');
    expect(requestLines).toHaveLength(cases.length + 1);
    for (const l of requestLines) {
      expect(Object.keys(l).sort()).toEqual(
        expect.arrayContaining(['ts', 'level', 'msg', 'reqId', 'method', 'path', 'status', 'ms']),
      );
      expect(l.path).not.toContain('?');
    }
  });
});

describe('plaintexts of /string-encrypt and /bootstrap-encrypt never appear in responses or logs', () => {
  it('for successful and failing requests', async () => {
    const marker = 'PLAINTEXT-MARKER-7f3c9e';
    const packager = newKey('packager', 'authenticated');
    const alice = newKey('alice', 'authenticated');
    const bob = newKey('bob', 'authenticated');
    const body = (encryptionKeys: string[]) => ({
      keys: [spec(packager, 'secret'), spec(alice, 'public'), spec(bob, 'public')],
      encryptionKeys,
      packagerIdentityPrivateKey: 'packager',
    });
    const valid = JSON.stringify([{ deploymentId: 'd1', remoteConfiguration: `apps/${marker}.oapp` }]);
    const cases: [string, FormData][] = [
      ['/string-encrypt', form(body(['alice']), marker)],
      ['/string-encrypt', form(body(['alice', 'bob']), marker)],
      ['/string-encrypt', form(body(['packager']), marker)],
      ['/string-encrypt', form({ ...body(['alice']), extra: 1 }, marker)],
      ['/bootstrap-encrypt', form(body(['alice']), valid)],
      ['/bootstrap-encrypt', form(body(['alice']), JSON.stringify([{ deploymentId: marker }]))],
      ['/bootstrap-encrypt', form(body(['alice']), JSON.stringify([{ deploymentId: 1, remote: marker }]))],
      ['/bootstrap-encrypt', form(body(['alice']), `[{"deploymentId":"${marker}"`)],
      ['/bootstrap-encrypt', form(body(['nobody']), valid)],
    ];
    const seen: string[] = [];
    const statuses: number[] = [];
    for (const [path, fd] of cases) {
      const res = await postForm(`${srv.url}${path}`, fd);
      statuses.push(res.status);
      seen.push(await res.text(), JSON.stringify([...res.headers]));
    }
    // Both kinds of answer were exercised: the successes are the first and the fifth case.
    expect(statuses.filter((s) => s === 200)).toHaveLength(2);
    expect(statuses.filter((s) => s >= 400)).toHaveLength(cases.length - 2);
    for (const s of [srv.logs.join(''), ...seen]) expect(s).not.toContain(marker);
  });
});
