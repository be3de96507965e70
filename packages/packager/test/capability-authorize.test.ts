import { describe, expect, it } from 'vitest';
import { createPackagerCapability } from '../src/capability.js';
import { newCallerToken } from '../src/auth.js';

// S174: `authorize` is the check `read` runs first, from the Authorization header alone, so a host can refuse an
// `Expect: 100-continue` request before `100 Continue` with the error (and answer) its read would give.

const inspect = newCallerToken(['inspect'], 'inspector');
const keys = newCallerToken(['key-gen'], 'keys');
const dirs = {
  resourceDirs: [],
  workflowSourceDirs: [],
  callerTokenHashes: `${inspect.record}\n${keys.record}`,
};

function refusal(f: () => void): { status: number; code: string; wwwAuthenticate: string | undefined } {
  const capability = createPackagerCapability();
  try {
    f();
  } catch (err) {
    const a = capability.answer(err, 'r-1');
    return {
      status: a.status,
      code: (JSON.parse(new TextDecoder().decode(a.body)) as { code: string }).code,
      wwwAuthenticate: a.headers['www-authenticate'],
    };
  }
  throw new Error('authorize accepted the request');
}

describe('PackagerCapability.authorize', () => {
  const c = createPackagerCapability();

  it('S174 refuses no token, a wrong one (401) and another scope (403), as read does', () => {
    expect(refusal(() => c.authorize('workflow-hash', undefined, dirs))).toMatchObject({
      status: 401,
      code: 'REQUEST_UNAUTHENTICATED',
    });
    const wrong = newCallerToken(['inspect'], 'x').token;
    expect(refusal(() => c.authorize('workflow-hash', `Bearer ${wrong}`, dirs))).toMatchObject({
      status: 401,
      code: 'REQUEST_UNAUTHENTICATED',
      wwwAuthenticate: 'Bearer realm="packager", error="invalid_token"',
    });
    expect(refusal(() => c.authorize('workflow-hash', `Bearer ${keys.token}`, dirs))).toMatchObject({
      status: 403,
      code: 'REQUEST_FORBIDDEN',
    });
  });

  it('S174 accepts a token of the scope, an open operation, and any caller without token records', () => {
    expect(() => c.authorize('workflow-hash', `Bearer ${inspect.token}`, dirs)).not.toThrow();
    expect(() => c.authorize('health', undefined, dirs)).not.toThrow();
    expect(() =>
      c.authorize('workflow-hash', undefined, { resourceDirs: [], workflowSourceDirs: [] }),
    ).not.toThrow();
    expect(() => c.authorize('no-such-operation', undefined, dirs)).toThrow(RangeError);
  });
});
