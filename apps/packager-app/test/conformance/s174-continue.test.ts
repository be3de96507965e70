// S174 with `Expect: 100-continue` on both front-ends (ADR 0140): with the same caller token records, the Express
// service and the agent hosting packager.oapp judge the token from the headers before they invite the body. No
// token, a wrong one and one of another scope get the same final 401/403 (status, answer headers, bytes) and never
// `100 Continue`; a token of the scope gets `100 Continue` on both, and the same answer once the body follows.
import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  ANSWER_HEADERS,
  RawClient,
  rawCode,
  sampleWorkflow,
  useFrontEnds,
  type RawResponse,
} from './harness.js';

function callerToken(scopes: string, name: string): { token: string; record: string } {
  const token = `oappt_${randomBytes(32).toString('base64url')}`;
  return { token, record: `sha256:${createHash('sha256').update(token).digest('hex')} ${scopes} ${name}` };
}

const inspect = callerToken('inspect', 'inspector');
const keys = callerToken('key-gen', 'keys');
const f = useFrontEnds({ callerTokenHashes: [inspect.record, keys.record] });

const BODY = Buffer.from(JSON.stringify(sampleWorkflow()));
const head = (id: string, authorization: string | undefined) =>
  `POST /workflow-hash HTTP/1.1\r\nHost: x\r\nX-Request-Id: ${id}\r\nContent-Type: application/json\r\n` +
  `Content-Length: ${BODY.length}\r\n` +
  (authorization === undefined ? '' : `Authorization: ${authorization}\r\n`) +
  'Expect: 100-continue\r\n\r\n';

/** What both must agree on: the status, the answer's own headers and its bytes. */
function answerOf(r: RawResponse) {
  const headers: Record<string, string | undefined> = {};
  for (const h of ANSWER_HEADERS) headers[h] = r.headers[h];
  return { status: r.status, headers, body: r.body };
}

describe('S174 caller tokens with Expect: 100-continue on both front-ends', () => {
  it.each([
    ['no token', 's174c-none', undefined, 401, 'REQUEST_UNAUTHENTICATED'],
    [
      'a wrong token',
      's174c-wrong',
      `Bearer ${callerToken('inspect', 'x').token}`,
      401,
      'REQUEST_UNAUTHENTICATED',
    ],
    ['a token of another scope', 's174c-scope', `Bearer ${keys.token}`, 403, 'REQUEST_FORBIDDEN'],
  ] as const)(
    'S174 %s: the same final refusal from the headers alone on both, never 100 Continue',
    async (_what, id, authorization, status, code) => {
      const send = async (base: string) => {
        const raw = await RawClient.open(base);
        await raw.send(head(id, authorization));
        // Only the headers were sent: an answer is the refusal judged from them (then the connection closes).
        const r = await raw.final();
        await raw.closed();
        return { r, text: raw.received };
      };
      const [express, agent] = await Promise.all([send(f.express), send(f.agent)]);
      for (const side of [express, agent]) {
        expect(side.text).not.toContain('HTTP/1.1 100');
        expect(side.r.interim).toEqual([]);
        expect({ status: side.r.status, code: rawCode(side.r) }).toEqual({ status, code });
        expect(side.r.headers['connection']).toBe('close');
      }
      expect(answerOf(agent.r)).toEqual(answerOf(express.r));
    },
    10_000,
  );

  it('S174 a token of the scope: 100 Continue on both, then the same answer', async () => {
    const send = async (base: string) => {
      const raw = await RawClient.open(base);
      await raw.send(head('s174c-ok', `Bearer ${inspect.token}`));
      // No final answer can come before the body: wait for the interim one.
      await raw.until((t) => t.includes('\r\n\r\n'));
      const interim = raw.received;
      await raw.send(BODY);
      const r = await raw.final();
      raw.destroy();
      return { interim, r };
    };
    const [express, agent] = await Promise.all([send(f.express), send(f.agent)]);
    expect([express.interim, agent.interim]).toEqual([
      'HTTP/1.1 100 Continue\r\n\r\n',
      'HTTP/1.1 100 Continue\r\n\r\n',
    ]);
    expect(express.r.status).toBe(200);
    expect(answerOf(agent.r)).toEqual(answerOf(express.r));
  }, 10_000);
});
