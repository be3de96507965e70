import express, { type Request } from 'express';
import { describe, expect, it } from 'vitest';
import { JSON_TYPE, negotiate, OCTET_STREAM, TEXT_PLAIN } from '../src/negotiate.js';

function request(accept: string | undefined): Request {
  const req = Object.create(express.request) as Request;
  Object.assign(req, { headers: accept === undefined ? {} : { accept } });
  return req;
}

function viaAccepts(req: Request, offered: readonly string[]): string | undefined {
  const chosen = req.accepts([...offered]);
  return typeof chosen === 'string' ? chosen : undefined;
}

describe('negotiate', () => {
  const offers = [[TEXT_PLAIN, OCTET_STREAM], [OCTET_STREAM], [JSON_TYPE]] as const;
  const headers = [
    undefined,
    '',
    '*/*',
    'text/plain',
    'application/octet-stream',
    'application/json',
    'text/*',
    'text/html',
    'application/octet-stream, text/plain;q=0.5',
    'text/plain;q=0',
    'TEXT/PLAIN',
    'text/plain; charset=utf-8',
    'application/json;q=0, */*',
  ];

  it.each(offers.flatMap((o) => headers.map((h) => [o, h] as const)))(
    'offering %j for Accept %j answers as req.accepts does',
    (offered, accept) => {
      const expected = viaAccepts(request(accept), offered);
      if (expected === undefined) {
        expect(() => negotiate(request(accept), offered)).toThrow(
          expect.objectContaining({ code: 'REQUEST_NOT_ACCEPTABLE' }),
        );
      } else {
        expect(negotiate(request(accept), offered)).toBe(expected);
      }
    },
  );
});
