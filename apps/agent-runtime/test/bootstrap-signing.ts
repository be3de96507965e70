// What the signed-bootstrap tests share: the agent's key, administrators and their signers, bootstrap files with
// their `.sig`, and the error a load rejects with.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseKeyTuple, type KeyPair } from '@org/envelope-crypto';
import type { BootstrapAdministrators } from '@org/oapp-format';
import { tuple, type TestKeys } from './fixtures.js';

/** The agent's key of `keys` (the packager to the agent), as `loadBootstrap` takes it. */
export const agentKeyOf = (keys: TestKeys) => parseKeyTuple(tuple(keys.packager, keys.agent));

/** Administrators with the public keys of `pairs` (AGENT_BOOTSTRAP_ADMIN_KEYS[0], [1], …) and `threshold`. */
export const administratorsOf = (pairs: KeyPair[], threshold = 1): BootstrapAdministrators => ({
  keys: pairs.map((k, i) => ({ id: `AGENT_BOOTSTRAP_ADMIN_KEYS[${i}]`, publicKey: k.publicKey!.bytes })),
  threshold,
});

/** A bootstrap signer with the secret key of `k`. */
export const bootstrapSigner = (k: KeyPair) => ({ secretKey: k.secretKey, signText: 'bootstrap' });

/** The error `p` rejects with; throws when it resolves. */
export async function failure(p: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await p;
  } catch (err) {
    return err as { code: string; message: string };
  }
  throw new Error('did not reject');
}

let n = 0;
/** A new plain bootstrap file of `content` in `dir`, with `sig` as its `.sig` beside it when given: its path. */
export function bootstrapFile(dir: string, content: Uint8Array | string, sig?: string): string {
  const path = join(dir, `bootstrap-${n++}.json`);
  writeFileSync(path, content);
  if (sig !== undefined) writeFileSync(`${path}.sig`, sig);
  return path;
}
