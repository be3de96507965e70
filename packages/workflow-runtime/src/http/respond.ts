import type { ServerResponse } from 'node:http';
import type { StepResult } from '@org/workflow-engine';
import { AgentError } from '../errors.js';

/** Headers a step may not set on its response: framing and connection management stay with the server. */
const RESERVED = new Set([
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'trailer',
]);

function statusOf(result: StepResult): number {
  const status = result.status ?? 200;
  if (!Number.isInteger(status) || status < 200 || status > 599) {
    throw new AgentError('AGENT_RESPONSE_INVALID', 'the step set a status_code outside 200–599');
  }
  return status;
}

function bodyOf(result: StepResult): { bytes: Buffer; type: string } {
  const body = result.body;
  if (body === undefined) return { bytes: Buffer.alloc(0), type: 'text/plain; charset=utf-8' };
  if (typeof body === 'string')
    return { bytes: Buffer.from(body, 'utf8'), type: 'text/plain; charset=utf-8' };
  return {
    bytes: Buffer.from(body.buffer, body.byteOffset, body.byteLength),
    type: 'application/octet-stream',
  };
}

/**
 * Writes a step result as the HTTP response: `status_code` (default 200), `setHeader` headers and the body
 * (default type `text/plain; charset=utf-8` for text, `application/octet-stream` for bytes).
 * @throws {@link AgentError} `AGENT_RESPONSE_INVALID` before anything is written, for a bad status or header.
 */
export function writeStepResult(res: ServerResponse, result: StepResult): void {
  const status = statusOf(result);
  const { bytes, type } = bodyOf(result);
  const headers = Object.create(null) as Record<string, string>; // a header named __proto__ stays a header
  for (const [name, value] of Object.entries(result.headers)) {
    const lower = name.toLowerCase();
    if (RESERVED.has(lower)) continue;
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name) || /[\0\r\n]/.test(value)) {
      throw new AgentError('AGENT_RESPONSE_INVALID', 'the step set a response header that is not valid');
    }
    headers[lower] = value;
  }
  headers['content-type'] ??= type;
  headers['content-length'] = String(bytes.length);
  res.writeHead(status, headers);
  res.end(bytes);
}
