import {
  decodeUtf8,
  decryptString,
  isCryptoError,
  isEncryptedString,
  type KeyTuple,
} from '@org/envelope-crypto';
import type { DeploymentRecord } from '@org/workflow-compiler';
import { AgentError } from './errors.js';
import type { Redactor } from '@org/workflow-engine';

/**
 * The only path by which the agent decrypts a `-2/` string. It counts its calls so tests can prove that
 * nothing is decrypted at load or start-up (S49).
 */
export interface StringDecryptor {
  decrypt(text: string): string;
  readonly calls: number;
}

/** A decryptor over the `AGENT_STRING_SECRETKEYS` candidates (tried in order by envelope-crypto). */
export function createStringDecryptor(candidates: readonly KeyTuple[]): StringDecryptor {
  let calls = 0;
  return {
    decrypt(text: string): string {
      calls++;
      return decodeUtf8(decryptString(text, candidates));
    },
    get calls() {
      return calls;
    },
  };
}

function walkStrings(value: unknown, visit: (s: string) => void): void {
  if (typeof value === 'string') visit(value);
  else if (Array.isArray(value)) value.forEach((v) => walkStrings(v, visit));
  else if (typeof value === 'object' && value !== null)
    Object.values(value).forEach((v) => walkStrings(v, visit));
}

/**
 * Header names whose fixed values are credentials (ADR 0127): `Authorization`, `Proxy-Authorization`, `Cookie`, and
 * any name holding one of these words, in any case (`X-Api-Key`, `X-Auth-Token`, `X-Session`, `X-Signature`…).
 */
const CREDENTIAL_HEADER = /auth|token|secret|key|pass|cookie|session|signature|credential|bearer/i;

/** True when a fixed header of this name carries a credential, so its value is a secret (ADR 0127). */
export function isCredentialHeader(name: string): boolean {
  return CREDENTIAL_HEADER.test(name);
}

/**
 * Registers, at load and without decrypting, every value the redactor must hide (ADR 0127): the fixed values of
 * credential headers ({@link isCredentialHeader}) of every host, secret `keyHex` values, and every string of every
 * host's `data` (restricted data, ADR 0081). `-2/` texts are registered wherever they are (they are ciphertext, but
 * there is no reason to log them); their plaintext is registered when decrypted. Other fixed header values
 * (`X-Client: readings-api`) are configuration, like ids, and stay readable in logs; a value substituted from the
 * secrets file is registered wherever it lands (ADR 0059).
 */
export function registerRecordSecrets(record: DeploymentRecord, redactor: Redactor): void {
  for (const key of record.keys ?? []) {
    if (key.type === 'secret')
      [key.keyHex, key.keyHex.toLowerCase(), key.keyHex.toUpperCase()].forEach((h) => redactor.add(h));
  }
  for (const host of record.allowExternalHostAccess ?? []) {
    for (const [name, value] of Object.entries(host.headers ?? {}))
      if (isCredentialHeader(name) || isEncryptedString(value)) redactor.add(value);
    walkStrings(host.data, (s) => redactor.add(s));
  }
}

function pointerEscape(key: string): string {
  return key.replaceAll('~', '~0').replaceAll('/', '~1');
}

/**
 * Returns the host's restricted `data` as JSON text with every `-2/` string decrypted now (docs/interfaces.md
 * §3.3, §5.5). Every declared host's `data` is restricted data, `authenticationHost` or not (ADR 0081); the
 * engine calls this only in authentication context. A `-2/` string outside host `data` (headers, bootstrap
 * `data`) is never decrypted (S48). A failure names the host and the field, never the value (S46, S47).
 * @throws {@link AgentError} `AGENT_RESTRICTED_DATA_NOT_ALLOWED` (no such host), `AGENT_RESTRICTED_DATA_FAILED`.
 */
export function readRestrictedData(
  record: DeploymentRecord,
  hostId: string,
  decryptor: StringDecryptor,
  redactor: Redactor,
): string {
  const host = (record.allowExternalHostAccess ?? []).find((h) => h.id === hostId);
  if (host === undefined) {
    throw new AgentError(
      'AGENT_RESTRICTED_DATA_NOT_ALLOWED',
      `host ${JSON.stringify(hostId.slice(0, 200))} is not declared in allowExternalHostAccess of deployment "${record.deploymentId}"`,
    );
  }
  const open = (value: unknown, pointer: string): unknown => {
    if (typeof value === 'string')
      return isEncryptedString(value) ? decryptField(value, hostId, pointer, decryptor, redactor) : value;
    if (Array.isArray(value)) return value.map((v, i) => open(v, `${pointer}/${i}`));
    if (typeof value !== 'object' || value === null) return value;
    const out: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
    for (const [k, v] of Object.entries(value)) out[k] = open(v, `${pointer}/${pointerEscape(k)}`);
    return out;
  };
  return JSON.stringify(open(host.data ?? {}, ''));
}

function decryptField(
  text: string,
  hostId: string,
  pointer: string,
  decryptor: StringDecryptor,
  redactor: Redactor,
): string {
  try {
    const plain = decryptor.decrypt(text);
    redactor.add(plain);
    return plain;
  } catch (err) {
    const code = isCryptoError(err) ? err.code : 'an unexpected error';
    throw new AgentError(
      'AGENT_RESTRICTED_DATA_FAILED',
      `restricted data of host "${hostId}", field "${pointer}", could not be decrypted (${code})`,
      { cause: isCryptoError(err) ? err : undefined },
    );
  }
}
