import { parseStrictJson } from '@org/workflow-compiler';
import { AgentError } from '@org/workflow-runtime';

/**
 * Variable references in trust-bearing positions of a signed bootstrap (ADR 0147, "Variables in a signed
 * bootstrap"). The administrators' signature covers the bootstrap's bytes, so a `${NAME}` reference is signed, not
 * its value: the value comes from the environment or `AGENT_SECRETS_FROM`, which the adversary of S173 (who can
 * change the deployment's files and environment, not the administrators' keys) controls. With administrator keys,
 * a reference is therefore refused wherever its value would decide what code runs, whom it trusts or what it may
 * reach; elsewhere (credentials, `data`, timings) references stay allowed and are listed by name in the report.
 */

/** One `${NAME}` reference: the RFC 6901 pointer of the string that holds it (records numbered as the compiler's). */
export interface VariableReference {
  readonly pointer: string;
  readonly name: string;
}

/**
 * Record members whose whole value is trust-bearing: the package source and its trust (`remoteConfiguration`,
 * `packaging`, `keys`), the deployment's identity other deployments grant access to (`deploymentId`), whether it
 * runs at all (`enabled`), the agent-wide powers (`agentControl`), and every grant (`allow*`, the legacy `hosts`).
 */
export const TRUST_BEARING_MEMBERS: ReadonlySet<string> = new Set([
  'deploymentId',
  'remoteConfiguration',
  'enabled',
  'packaging',
  'keys',
  'agentControl',
  'allowExternalHostAccess',
  'hosts',
  'allowHttpServerAccess',
  'allowFileAccess',
  'allowDeploymentAccess',
  'allowPackagerAccess',
]);

const NAME = /[A-Za-z0-9_]/;

/** The names referenced in `s` (the grammar of workflow-compiler SPEC.md §8.1; `$${` is a literal `${`). */
function namesIn(s: string): string[] {
  const names: string[] = [];
  let i = s.indexOf('$');
  while (i >= 0 && i < s.length) {
    if (s.startsWith('$${', i)) {
      i = s.indexOf('$', i + 3);
      continue;
    }
    if (s[i + 1] === '{') {
      let end = i + 2;
      while (end < s.length && NAME.test(s[end]!)) end++;
      if (s[end] === '}' && /^[A-Za-z_]/.test(s.slice(i + 2, end))) names.push(s.slice(i + 2, end));
      // A malformed `${` is the compiler's WORKFLOW_VARIABLE_INVALID, reported after this check.
      i = s.indexOf('$', end);
      continue;
    }
    i = s.indexOf('$', i + 1);
  }
  return names;
}

const escape = (segment: string | number): string => String(segment).replace(/~/g, '~0').replace(/\//g, '~1');

/** Every reference in the string values of `value` (member names are never substituted), in document order. */
export function variableReferences(value: unknown, path: (string | number)[] = []): VariableReference[] {
  if (typeof value === 'string') {
    const pointer = path.map((p) => `/${escape(p)}`).join('');
    return namesIn(value).map((name) => ({ pointer, name }));
  }
  if (Array.isArray(value)) return value.flatMap((v, i) => variableReferences(v, [...path, i]));
  if (typeof value === 'object' && value !== null)
    return Object.entries(value).flatMap(([k, v]) => variableReferences(v, [...path, k]));
  return [];
}

/**
 * Whether the value at `path` (`[record index, member, …]`) is trust-bearing. Inside a host grant its fixed
 * `headers` values and its restricted `data` are credentials, not reach (the host, allow list and transport are),
 * so references stay allowed there. In `errorHandling` (also under `workflow`), `redactionPatterns` and an
 * output's `outputUrl` decide what leaves the agent and what is hidden in it.
 */
export function isTrustBearing(path: readonly (string | number)[]): boolean {
  const [, member, ...rest] = path;
  if (typeof member !== 'string') return false;
  if (TRUST_BEARING_MEMBERS.has(member)) {
    const credential =
      (member === 'allowExternalHostAccess' || member === 'hosts') &&
      (rest[1] === 'headers' || rest[1] === 'data') &&
      rest.length >= 3;
    return !credential;
  }
  if (member === 'errorHandling' || member === 'workflow')
    return rest.includes('redactionPatterns') || rest[rest.length - 1] === 'outputUrl';
  return false;
}

function segmentsOf(pointer: string): string[] {
  return pointer
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/**
 * For a bootstrap whose administrators' signature was verified: refuses a variable reference in a trust-bearing
 * position ({@link isTrustBearing}) before anything is substituted. `bytes` is the bootstrap JSON as signed; text
 * that is not JSON is left to the compiler (which names the defect).
 * @throws {@link AgentError} `AGENT_BOOTSTRAP_UNSIGNED` (the value is not covered by the signature) naming each such
 *   JSON pointer and variable (up to five), never a value.
 */
export function refuseTrustBearingReferences(bytes: Uint8Array): void {
  // No `${` at all (the usual case): nothing to parse twice. A `\u` escape may spell one (`\u0024{`), so any
  // escape means parsing.
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (!text.includes('${') && !text.includes('\\u')) return;
  let parsed: unknown;
  try {
    parsed = parseStrictJson(bytes);
  } catch {
    return;
  }
  const records = Array.isArray(parsed) ? parsed : [parsed];
  const refused = variableReferences(records).filter((r) => isTrustBearing(segmentsOf(r.pointer)));
  if (refused.length === 0) return;
  const shown = refused
    .slice(0, 5)
    .map(
      (r) =>
        `${r.name} at ${JSON.stringify(r.pointer.length > 200 ? `${r.pointer.slice(0, 200)}…` : r.pointer)}`,
    );
  const more = refused.length > 5 ? ` and ${refused.length - 5} more` : '';
  throw new AgentError(
    'AGENT_BOOTSTRAP_UNSIGNED',
    `the signed bootstrap references a variable in a trust-bearing position (${shown.join(', ')}${more}): the ` +
      "administrators' signature covers the reference, not its value from the environment or AGENT_SECRETS_FROM; " +
      'write the value into the bootstrap and sign it again (agent README, "Signed bootstraps")',
  );
}
