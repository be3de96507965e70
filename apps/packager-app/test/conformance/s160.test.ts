// S160: bad uploads to the hosted packager. Oversized `body` or `stream` parts and a third part are refused with the
// Express service's limits and codes at the byte past the limit, before the part is whole (each upload here is
// chunked and never ends: only a refusal that does not wait for the rest can answer it); a stalled upload ends with
// the request timeout, an aborted one costs nothing; and the agent's other deployment answers meanwhile.
// Both front-ends run with a 2 s request timeout here (PACKAGER_REQUEST_TIMEOUT_MS, AGENT_REQUEST_TIMEOUT_MS).
import { describe, expect, it } from 'vitest';
import {
  RawClient,
  rawCode,
  sampleWorkflow,
  useFrontEnds,
  type FrontEnds,
  type RawResponse,
} from './harness.js';
import { encryptKeys, packageKeys, packageRequest } from './fixtures.js';

const REQUEST_MS = 2000;
const f = useFrontEnds({ requestMs: REQUEST_MS });

const KiB = 1024;
const MiB = 1024 * KiB;
/**
 * How far past a limit each upload goes before it stops: the multipart reader holds back the last bytes it has
 * (they may begin the next boundary), so the byte that crosses the limit is only counted once a few more follow.
 */
const PAST = KiB;
const e = encryptKeys();
const k = packageKeys();

/** The head of a chunked multipart upload (boundary `b`): no declared length, so nothing is judged from it. */
const head = (path: string, id: string, extra = '') =>
  `POST ${path} HTTP/1.1\r\nHost: x\r\nX-Request-Id: ${id}\r\nContent-Type: multipart/form-data; boundary=b\r\n` +
  `Transfer-Encoding: chunked\r\n${extra}\r\n`;
const chunk = (data: string | Buffer) => {
  const b = typeof data === 'string' ? Buffer.from(data) : data;
  return Buffer.concat([Buffer.from(`${b.length.toString(16)}\r\n`), b, Buffer.from('\r\n')]);
};
const bodyPart = (json: string) => `--b\r\nContent-Disposition: form-data; name="body"\r\n\r\n${json}\r\n`;
const streamPartHead =
  '--b\r\nContent-Disposition: form-data; name="stream"; filename="s"\r\nContent-Type: application/octet-stream\r\n\r\n';

/** The upload `pieces` to both front-ends on a fresh connection each, never ended; their answers. */
async function upload(id: string, path: string, pieces: (string | Buffer)[]) {
  const send = async (base: string) => {
    const raw = await RawClient.open(base);
    await raw.send(head(path, id));
    for (const p of pieces) await raw.send(chunk(p));
    const r = await raw.final();
    raw.destroy();
    return r;
  };
  const [express, agent] = await Promise.all([send(f.express), send(f.agent)]);
  return { express, agent };
}

/** What both must agree on in a raw answer. */
const same = (r: RawResponse) => ({
  status: r.status,
  interim: r.interim,
  body: r.body,
  'content-type': r.headers['content-type'],
  'x-request-id': r.headers['x-request-id'],
  connection: r.headers['connection'],
});

/** The echo deployment answers, on a fresh connection. */
async function echoAnswers(fe: FrontEnds): Promise<void> {
  const res = await fetch(`${fe.echo}/echo`, { method: 'POST', body: 'still here' });
  expect([res.status, await res.text()]).toEqual([200, 'still here!']);
}

describe('S160 oversized parts and a third part: refused at the limit, before the part is whole', () => {
  it.each([
    [
      'a body part over the 64 KiB field cap (/workflow-package)',
      's160-body',
      '/workflow-package',
      () => [
        `--b\r\nContent-Disposition: form-data; name="body"\r\n\r\n{"pad":"`,
        'x'.repeat(64 * KiB + PAST),
      ],
      413,
      'UPLOAD_FIELD_TOO_LARGE',
    ],
    [
      'a /string-encrypt stream part over its 64 KiB cap',
      's160-string',
      '/string-encrypt',
      () => [bodyPart(JSON.stringify(e.body(['alice']))), streamPartHead, Buffer.alloc(64 * KiB + PAST)],
      413,
      'UPLOAD_FILE_TOO_LARGE',
    ],
    [
      'a /workflow-package stream part over its 8 MiB cap',
      's160-workflow',
      '/workflow-package',
      () => [
        bodyPart(JSON.stringify(packageRequest(k))),
        streamPartHead,
        ...Array.from({ length: 8 }, () => Buffer.alloc(MiB, 0x20)),
        Buffer.alloc(PAST, 0x20),
      ],
      413,
      'UPLOAD_FILE_TOO_LARGE',
    ],
    [
      'a third part after body and stream',
      's160-third',
      '/workflow-package',
      () => [
        bodyPart(JSON.stringify(packageRequest(k))),
        streamPartHead,
        `${JSON.stringify(sampleWorkflow())}\r\n`,
        '--b\r\nContent-Disposition: form-data; name="extra"\r\n\r\nx',
      ],
      400,
      'UPLOAD_UNKNOWN_PART',
    ],
  ] as const)(
    'S160 %s',
    async (_what, id, path, pieces, status, code) => {
      const { express, agent } = await upload(id, path, pieces());
      expect({ status: express.status, code: rawCode(express) }).toEqual({ status, code });
      expect(same(agent)).toEqual(same(express));
      await echoAnswers(f);
    },
    10_000,
  );
});

describe('S160 a stalled and an aborted upload', () => {
  it(
    'S160 a stalled upload ends with the request timeout on both; the agent answers its other deployment and the packager meanwhile',
    async () => {
      const stall = async (base: string) => {
        const raw = await RawClient.open(base);
        await raw.send(head('/string-encrypt', 's160-stall'));
        await raw.send(chunk(bodyPart(JSON.stringify(e.body(['alice'])))));
        await raw.send(chunk(`${streamPartHead}only the start`));
        return raw;
      };
      const [express, agent] = await Promise.all([stall(f.express), stall(f.agent)]);
      // While both wait for the rest: the echo deployment and the packager's /health answer.
      await echoAnswers(f);
      expect((await fetch(`${f.agent}/health`)).status).toBe(200);
      const [re, ra] = await Promise.all([express.final(), agent.final()]);
      await Promise.all([express.closed(), agent.closed()]);
      expect(re.status).toBe(408);
      expect(same(ra)).toEqual(same(re));
      await echoAnswers(f);
    },
    REQUEST_MS * 4,
  );

  it('S160 an aborted upload: both keep serving, the agent logs no failure and answers its other deployment', async () => {
    const abort = async (base: string) => {
      const raw = await RawClient.open(base);
      await raw.send(head('/workflow-package', 's160-abort'));
      await raw.send(chunk(bodyPart(JSON.stringify(packageRequest(k)))));
      await raw.send(chunk(`${streamPartHead}{"workflows":`));
      raw.destroy();
    };
    await Promise.all([abort(f.express), abort(f.agent)]);
    await echoAnswers(f);
    for (const base of [f.express, f.agent]) {
      const res = await fetch(`${base}/workflow-hash`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(sampleWorkflow()),
      });
      expect(res.status).toBe(200);
    }
    const failures = f.agentLines.filter((l) => l.includes('"level":"error"'));
    expect(failures).toEqual([]);
  });
});

describe('S160 an upload declared over the limit (Expect: 100-continue, S8)', () => {
  it('S160 both refuse it from its headers with the same 413, without 100 Continue', async () => {
    const declare = async (base: string) => {
      const raw = await RawClient.open(base);
      await raw.send(
        'POST /workflow-package HTTP/1.1\r\nHost: x\r\nX-Request-Id: s160-expect\r\nExpect: 100-continue\r\n' +
          'Content-Type: multipart/form-data; boundary=b\r\nContent-Length: 104857600\r\n\r\n',
      );
      const r = await raw.final();
      raw.destroy();
      return r;
    };
    const [express, agent] = await Promise.all([declare(f.express), declare(f.agent)]);
    expect({ status: express.status, code: rawCode(express), interim: express.interim }).toEqual({
      status: 413,
      code: 'UPLOAD_REQUEST_TOO_LARGE',
      interim: [],
    });
    // The agent's checkContinue listener judges a packager step's upload by the capability's options for it.
    expect(same(agent)).toEqual(same(express));
    await echoAnswers(f);
  });
});
