import { generateKeyPair } from '@org/envelope-crypto';
import { encryptBootstrap, signBootstrap } from '@org/oapp-format';
import { describe, expect, it } from 'vitest';
import { isTrustBearing, variableReferences } from '../src/startup/bootstrap-references.js';
import {
  bootstrapReport,
  loadBootstrap,
  type BootstrapTrustOptions,
} from '../src/startup/bootstrap-source.js';
import type { BootstrapVariables } from '../src/startup/variables.js';
import {
  administratorsOf,
  agentKeyOf,
  bootstrapFile,
  bootstrapSigner,
  failure,
} from './bootstrap-signing.js';
import { makeKeys, makeRecord, tempDir } from './fixtures.js';

// A signed bootstrap covers its `${NAME}` references, not their values (ADR 0147, "Variables in a signed
// bootstrap"): with administrator keys, a reference in a trust-bearing position is refused at start-up.

const keys = makeKeys();
const dir = tempDir();
const agentKey = agentKeyOf(keys);
const admin = generateKeyPair('sign');
const withAdmins: BootstrapTrustOptions = { administrators: administratorsOf([admin]) };
const signers = [bootstrapSigner(admin)];

// The adversary's values: the environment and AGENT_SECRETS_FROM are theirs.
const SECRET_VALUE = 'attacker-value-never-logged';
const vars = (names: string[], secret: string[] = []): BootstrapVariables => ({
  values: new Map(names.map((n) => [n, n === 'PORT' ? '18080' : n === 'MIN' ? '0' : SECRET_VALUE])),
  secretNames: new Set(secret),
});

/** A plain bootstrap file of `record`, signed by the administrator (its `.sig` beside it). */
function signedFile(record: Record<string, unknown>): string {
  const bytes = new TextEncoder().encode(JSON.stringify([record]));
  return bootstrapFile(dir, bytes, signBootstrap(bytes, { signers }));
}

const base = () => makeRecord(keys, 'app.oapp');

type Json = Record<string | number, unknown>;

/** Sets the value at `path` of `r` to `value` (members created as needed). */
function setIn(r: Json, path: readonly (string | number)[], value: unknown): void {
  let at = r;
  for (let i = 0; i < path.length - 1; i++) {
    at[path[i]!] ??= typeof path[i + 1] === 'number' ? [] : {};
    at = at[path[i]!] as Json;
  }
  at[path[path.length - 1]!] = value;
}

/** A record with `edit` applied to a copy of the fixture record. */
function withEdit(edit: (r: Json) => void): Record<string, unknown> {
  const r = JSON.parse(JSON.stringify(base())) as Json;
  edit(r);
  return r;
}

/** Trust-bearing positions: [what, edit, pointer, variable]. */
const refused: [string, (r: Json) => void, string, string][] = [
  ['a key', (r) => setIn(r, ['keys', 2, 'keyHex'], '${AUTHOR_KEY}'), '/0/keys/2/keyHex', 'AUTHOR_KEY'],
  ['a key id', (r) => setIn(r, ['keys', 0, 'id'], 'pack${SUFFIX}'), '/0/keys/0/id', 'SUFFIX'],
  [
    'packaging signers',
    (r) => setIn(r, ['packaging', 'requiredSigners'], [{ id: '${SIGNER}' }]),
    '/0/packaging/requiredSigners/0/id',
    'SIGNER',
  ],
  [
    'packaging.minimumSequence',
    (r) => setIn(r, ['packaging', 'minimumSequence'], '${MIN}'),
    '/0/packaging/minimumSequence',
    'MIN',
  ],
  [
    'packaging.packageId',
    (r) => setIn(r, ['packaging', 'packageId'], '${PKG}'),
    '/0/packaging/packageId',
    'PKG',
  ],
  [
    'remoteConfiguration',
    (r) => setIn(r, ['remoteConfiguration'], '${PKG_PATH}'),
    '/0/remoteConfiguration',
    'PKG_PATH',
  ],
  ['deploymentId', (r) => setIn(r, ['deploymentId'], 'dep-${N}'), '/0/deploymentId', 'N'],
  [
    'a server grant',
    (r) => setIn(r, ['allowHttpServerAccess', 0, 'port'], '${PORT}'),
    '/0/allowHttpServerAccess/0/port',
    'PORT',
  ],
  [
    'a host grant',
    (r) => setIn(r, ['allowExternalHostAccess'], [{ id: 'api', host: 'https://${API_HOST}/' }]),
    '/0/allowExternalHostAccess/0/host',
    'API_HOST',
  ],
  [
    'a legacy host',
    (r) => setIn(r, ['hosts'], { api: { host: '${API_HOST}' } }),
    '/0/hosts/api/host',
    'API_HOST',
  ],
  [
    'a file grant',
    (r) => setIn(r, ['allowFileAccess'], [{ id: 'f', directoryOrFile: '${DIR}', READ: true }]),
    '/0/allowFileAccess/0/directoryOrFile',
    'DIR',
  ],
  [
    'a deployment grant',
    (r) => setIn(r, ['allowDeploymentAccess'], [{ id: 'd', access: 'call', deploymentId: '${TARGET}' }]),
    '/0/allowDeploymentAccess/0/deploymentId',
    'TARGET',
  ],
  [
    'the packager grant',
    (r) => setIn(r, ['allowPackagerAccess'], '${PACKAGER_ON}'),
    '/0/allowPackagerAccess',
    'PACKAGER_ON',
  ],
  ['enabled', (r) => setIn(r, ['enabled'], '${ON}'), '/0/enabled', 'ON'],
  [
    'a log output URL',
    (r) => setIn(r, ['errorHandling'], { logs: { outputUrl: 'https://${LOG_HOST}/in' } }),
    '/0/errorHandling/logs/outputUrl',
    'LOG_HOST',
  ],
];

describe('S173: variables in a signed bootstrap (ADR 0147)', () => {
  it.each(refused)(
    'S173 refuses a reference in %s of a signed plain bootstrap with AGENT_BOOTSTRAP_UNSIGNED naming the pointer and the variable, never its value',
    async (_what, edit, pointer, name) => {
      const path = signedFile(withEdit(edit));
      const e = await failure(loadBootstrap(path, agentKey, vars([name], [name]), withAdmins));
      expect(e.code).toBe('AGENT_BOOTSTRAP_UNSIGNED');
      expect(e.message).toContain(`${name} at ${JSON.stringify(pointer)}`);
      expect(e.message).not.toContain(SECRET_VALUE);
      // Refused although the variable is set, and even when it is not (nothing is looked up first).
      const unset = await failure(loadBootstrap(path, agentKey, vars([]), withAdmins));
      expect(unset.code).toBe('AGENT_BOOTSTRAP_UNSIGNED');
    },
  );

  it('S173 refuses a reference spelt with JSON escapes (\\u0024{…}), which the compiler substitutes like any other', async () => {
    const json = JSON.stringify([base()]).replace('"app.oapp"', '"\\u0024{PKG_PATH}"');
    expect(json).toContain('\\u0024{PKG_PATH}');
    const bytes = new TextEncoder().encode(json);
    const path = bootstrapFile(dir, bytes, signBootstrap(bytes, { signers }));
    const e = await failure(loadBootstrap(path, agentKey, vars(['PKG_PATH']), withAdmins));
    expect(e.code).toBe('AGENT_BOOTSTRAP_UNSIGNED');
    expect(e.message).toContain('PKG_PATH at "/0/remoteConfiguration"');
  });

  it('S173 refuses it in a signed encrypted bootstrap too, and names every reference', async () => {
    const record = withEdit((r) => {
      setIn(r, ['remoteConfiguration'], '${PKG_PATH}');
      setIn(r, ['packaging', 'additionalSigners'], [{ id: '${A}' }, { id: '${B}' }]);
    });
    const text = encryptBootstrap(new TextEncoder().encode(JSON.stringify(record)), {
      packagerSecretKey: keys.packager.secretKey,
      recipients: [keys.agent.publicKey!],
      signers,
    });
    const e = await failure(loadBootstrap(text, agentKey, vars(['PKG_PATH', 'A', 'B']), withAdmins));
    expect(e.code).toBe('AGENT_BOOTSTRAP_UNSIGNED');
    for (const part of [
      'PKG_PATH at "/0/remoteConfiguration"',
      'A at "/0/packaging/additionalSigners/0/id"',
      'B at "/0/packaging/additionalSigners/1/id"',
    ])
      expect(e.message).toContain(part);
  });

  it('S173 allows references outside trust-bearing positions and reports their names, not their values', async () => {
    const record = withEdit((r) => {
      r['allowExternalHostAccess'] = [
        {
          id: 'api',
          host: 'https://api.example.test/',
          headers: { Authorization: 'Bearer ${API_TOKEN}' },
          data: { clientSecret: '${CLIENT_SECRET}' },
        },
      ];
      r['data'] = { region: '${REGION}', literal: 'costs $${5}' };
      r['remoteConfigurationAuth'] = '${CONFIG_TOKEN}';
    });
    const names = ['API_TOKEN', 'CLIENT_SECRET', 'REGION', 'CONFIG_TOKEN'];
    const loaded = await loadBootstrap(signedFile(record), agentKey, vars(names, ['API_TOKEN']), withAdmins);
    expect(loaded.trust.signature).toBe('verified');
    expect(loaded.trust.variables).toEqual(names);
    const { line } = bootstrapReport(loaded.form, loaded.trust);
    expect(line.fields['variables']).toBe(names.join(','));
    expect(JSON.stringify(line)).not.toContain(SECRET_VALUE);
    // A literal `$${` is no reference; without references the report says so.
    const plain = await loadBootstrap(signedFile(base()), agentKey, vars([]), withAdmins);
    expect(bootstrapReport(plain.form, plain.trust).line.fields['variables']).toBe('none');
  });

  it('without administrator keys references stay allowed everywhere (today), and are reported by name', async () => {
    const path = signedFile(withEdit((r) => setIn(r, ['remoteConfiguration'], '${PKG_PATH}')));
    const loaded = await loadBootstrap(path, agentKey, vars(['PKG_PATH']), {});
    expect(loaded.trust.signature).toBe('signed, not checked');
    expect(loaded.bootstrap[0]!.remoteConfiguration).toBe(SECRET_VALUE);
    expect(bootstrapReport(loaded.form, loaded.trust).line.fields['variables']).toBe('PKG_PATH');
  });

  it('finds references as the compiler substitutes them', () => {
    expect(
      variableReferences([{ a: 'x ${A} $${B} ${C_1}$', 'k${D}': ['${E}'], n: 1, m: '${ bad }' }]).map(
        (r) => `${r.pointer}:${r.name}`,
      ),
    ).toEqual(['/0/a:A', '/0/a:C_1', '/0/k${D}/0:E']);
    expect(isTrustBearing([0, 'allowExternalHostAccess', 0, 'headers', 'Authorization'])).toBe(false);
    expect(isTrustBearing([0, 'allowExternalHostAccess', 0, 'headers'])).toBe(true);
    expect(isTrustBearing([0, 'allowExternalHostAccess', 0, 'allowList', 0, 'uriPattern'])).toBe(true);
    expect(isTrustBearing([0, 'workflow', 'errorHandling', 'redactionPatterns', 0])).toBe(true);
    expect(isTrustBearing([0, 'workflow', 'shutdownTimeout'])).toBe(false);
    expect(isTrustBearing([0, 'data', 'x'])).toBe(false);
  });
});
