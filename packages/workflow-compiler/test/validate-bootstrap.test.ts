/* eslint-disable @typescript-eslint/no-explicit-any -- the cases mutate deeply nested fixture JSON */
import { describe, expect, it } from 'vitest';
import {
  MAX_SCRIPT_TIMEOUT_MS,
  WorkflowError,
  validateBootstrap,
  type WorkflowErrorDetail,
} from '../src/index.js';

const hex = (byte: string, n: number): string => byte.repeat(n / 2);

/** docs/interfaces.md §3.7, as a bare record. */
function example(): Record<string, any> {
  return {
    deploymentId: 'invoices-eu-1',
    remoteConfiguration: 'apps/invoice-uploader.oapp',
    persistenceRoot: 'persistence',
    packaging: {
      packageId: 'invoice-uploader',
      packagerIdentities: ['acme-packager'],
      requiredSigners: [{ id: 'acme-author', description: 'Vendor release key' }],
      additionalSigners: [{ id: 'ops-review' }, { id: 'sec-review' }],
      requiredAdditionalSignerCount: 1,
    },
    keys: [
      { id: 'acme-packager', purpose: 'authenticated', type: 'public', keyHex: hex('AB', 64) },
      { id: 'this-deployment', purpose: 'authenticated', type: 'secret', keyHex: hex('CD', 64) },
      { id: 'acme-author', purpose: 'sign', type: 'public', keyHex: hex('12', 64) },
      { id: 'ops-review', purpose: 'sign', type: 'public', keyHex: hex('34', 64) },
      { id: 'sec-review', purpose: 'sign', type: 'public', keyHex: hex('56', 64) },
    ],
    allowHttpServerAccess: [{ id: 'api', port: 8080, bindAddress: '0.0.0.0' }],
    allowExternalHostAccess: [
      {
        id: 'ledger',
        host: 'https://ledger.example.com',
        headers: { 'X-Tenant': 'eu-1' },
        allowList: [{ method: 'POST', uriPattern: '/v1/invoices' }],
        httpTimeout: 15000,
      },
      {
        id: 'idp',
        host: 'https://login.example.com',
        authenticationHost: true,
        allowList: [{ method: 'POST', uriPattern: '/oauth2/token' }],
        data: { clientId: '${IDP_CLIENT_ID}', clientSecret: '-2/c2VjcmV0' },
      },
    ],
    allowFileAccess: [{ id: 'inbox', directoryOrFile: '/data/inbox', READ: true, LIST: true }],
    data: { region: 'eu-1' },
    workflow: {
      metricOutput: { enabled: 'false' },
      errorHandling: { enableLocalLogging: true, redactionPatterns: ['Bearer [A-Za-z0-9._-]+'] },
    },
  };
}

function rejects(mutate: (b: Record<string, any>) => void, code: string): WorkflowErrorDetail[] {
  const b = example();
  mutate(b);
  expect(() => validateBootstrap(b)).toThrowCode(WorkflowError, code);
  try {
    validateBootstrap(JSON.stringify(b));
  } catch (e) {
    return [...((e as WorkflowError).details?.errors ?? [])];
  }
  return [];
}

describe('validateBootstrap', () => {
  it('accepts the reference example as an array and as a bare record (normalised to an array)', () => {
    expect(validateBootstrap([example()])).toHaveLength(1);
    const bare = validateBootstrap(JSON.stringify(example()));
    expect(bare).toHaveLength(1);
    expect(bare[0]?.deploymentId).toBe('invoices-eu-1');
  });

  it('converts the legacy hosts map to allowExternalHostAccess with allowList objects', () => {
    const b = example();
    delete b['allowExternalHostAccess'];
    b['hosts'] = {
      crm: {
        host: 'http://mockserver',
        headers: {},
        authenticationHost: true,
        allowlist: [
          ['GET', '/api/count'],
          ['POST', '/.*/oauth2/.*'],
        ],
        data: { authorization: 'Basic eA==' },
      },
    };
    const [record] = validateBootstrap(b);
    expect(record?.['hosts']).toBeUndefined();
    expect(record?.allowExternalHostAccess).toEqual([
      {
        id: 'crm',
        host: 'http://mockserver',
        headers: {},
        authenticationHost: true,
        data: { authorization: 'Basic eA==' },
        allowList: [
          { method: 'GET', uriPattern: '/api/count' },
          { method: 'POST', uriPattern: '/.*/oauth2/.*' },
        ],
      },
    ]);
  });

  it('normalises plain-string signers to {id} and servePackagedAsset to serveFromPackagedAsset', () => {
    const b = example();
    b['packaging'].requiredSigners = ['acme-author'];
    b['packaging'].additionalSigners = ['ops-review', { id: 'sec-review' }];
    b['allowHttpServerAccess'] = [
      { id: 'files', port: 8081, servePackagedAsset: { packagedAssetFileId: 'site' } },
    ];
    b['allowFileAccess'].push({ id: 'site', directoryOrFile: '/data/site.zip', READ: true });
    const [record] = validateBootstrap(b);
    expect(record?.packaging?.requiredSigners).toEqual([{ id: 'acme-author' }]);
    expect(record?.packaging?.additionalSigners).toEqual([{ id: 'ops-review' }, { id: 'sec-review' }]);
    expect(record?.allowHttpServerAccess?.[0]).toEqual({
      id: 'files',
      port: 8081,
      serveFromPackagedAsset: { packagedAssetFileId: 'site' },
    });
  });

  it.each([
    [3, 'WORKFLOW_BOOTSTRAP_SIGNER_COUNT'],
    [-1, 'WORKFLOW_BOOTSTRAP_INVALID'],
    ['2', 'WORKFLOW_BOOTSTRAP_INVALID'],
    [1.5, 'WORKFLOW_BOOTSTRAP_INVALID'],
  ])('rejects requiredAdditionalSignerCount %j with two additionalSigners as %s (S92, S68)', (k, code) => {
    rejects((b) => (b['packaging'].requiredAdditionalSignerCount = k), code);
  });

  it('rejects a count over the pool as JSON text too, and accepts K = 0 and K = 2', () => {
    const b = example();
    b['packaging'].requiredAdditionalSignerCount = 3;
    expect(() => validateBootstrap(JSON.stringify(b))).toThrowCode(
      WorkflowError,
      'WORKFLOW_BOOTSTRAP_SIGNER_COUNT',
    );
    expect(() =>
      validateBootstrap(
        '[{"deploymentId":"d","remoteConfiguration":"r","packaging":{"packageId":"p","requiredAdditionalSignerCount":9007199254740993}}]',
      ),
    ).toThrowCode(WorkflowError, 'WORKFLOW_JSON_BAD_NUMBER');
    for (const k of [0, 2]) {
      b['packaging'].requiredAdditionalSignerCount = k;
      expect(validateBootstrap(b)).toHaveLength(1);
    }
  });

  it('accepts minimumSequence, allowDowngradeTo and clockSkewSeconds in range and rejects them out of range', () => {
    const b = example();
    Object.assign(b['packaging'], { minimumSequence: 7, allowDowngradeTo: 0, clockSkewSeconds: 86_400 });
    expect(validateBootstrap(b)[0]?.packaging).toMatchObject({
      minimumSequence: 7,
      allowDowngradeTo: 0,
      clockSkewSeconds: 86_400,
    });
    for (const [field, value] of [
      ['minimumSequence', -1],
      ['minimumSequence', 1.5],
      ['allowDowngradeTo', '3'],
      ['clockSkewSeconds', 86_401],
      ['clockSkewSeconds', -1],
    ] as const)
      rejects((x) => (x['packaging'][field] = value), 'WORKFLOW_BOOTSTRAP_INVALID');
  });

  it('rejects a signer in both requiredSigners and additionalSigners (S91)', () => {
    const d = rejects(
      (b) => b['packaging'].additionalSigners.push({ id: 'acme-author' }),
      'WORKFLOW_BOOTSTRAP_SIGNER_CONFLICT',
    );
    expect(d[0]?.pointer).toBe('/0/packaging/additionalSigners/2/id');
  });

  it.each([
    [(b: any) => (b.keys[2].keyHex = hex('12', 62)), 'sign public 62'],
    [(b: any) => (b.keys[2].keyHex = 'A'.repeat(63)), 'odd length (S63)'],
    [(b: any) => (b.keys[1].keyHex = hex('CD', 128)), 'authenticated secret 128'],
    [
      (b: any) => b.keys.push({ id: 'sk', purpose: 'sign', type: 'secret', keyHex: hex('EF', 64) }),
      'sign secret 64',
    ],
    [
      (b: any) => b.keys.push({ id: 'sym', purpose: 'symmetric', type: 'public', keyHex: hex('EF', 64) }),
      'symmetric public',
    ],
  ])(
    'rejects bad key material (%s) with WORKFLOW_BOOTSTRAP_KEY_INVALID naming the key id',
    (mutate, _label) => {
      const d = rejects(mutate, 'WORKFLOW_BOOTSTRAP_KEY_INVALID');
      expect(d[0]?.detail).toMatch(/^key "/);
    },
  );

  it('accepts a 128-hex sign secret key and lowercase hex', () => {
    const b = example();
    b['keys'].push({ id: 'sk', purpose: 'sign', type: 'secret', keyHex: hex('ef', 128) });
    expect(validateBootstrap(b)).toHaveLength(1);
  });

  it('rejects a non-hex character without echoing the key (S64)', () => {
    const secret = hex('CD', 62) + 'fg';
    const d = rejects((b) => (b['keys'][1].keyHex = secret), 'WORKFLOW_BOOTSTRAP_INVALID');
    expect(JSON.stringify(d)).not.toContain(secret);
    expect(d[0]).toEqual({
      pointer: '/0/keys/1/keyHex',
      detail: 'expected a string matching ^[0-9a-fA-F]+$, found string of length 64',
    });
  });

  it.each([
    [(b: any) => (b.packaging.packagerIdentities = ['missing']), 'unknown identity'],
    [(b: any) => (b.packaging.packagerIdentities = ['acme-author']), 'identity is a sign key'],
    [(b: any) => (b.packaging.requiredSigners = [{ id: 'acme-packager' }]), 'signer is an authenticated key'],
    [(b: any) => (b.packaging.additionalSigners = [{ id: 'nobody' }]), 'unknown additional signer'],
    [(b: any) => (b.keys = b.keys.filter((k: any) => k.id !== 'this-deployment')), 'no own secret key'],
  ])('rejects a bad packaging reference (%s) with WORKFLOW_BOOTSTRAP_KEY_REFERENCE', (mutate, _label) => {
    rejects(mutate as (b: Record<string, any>) => void, 'WORKFLOW_BOOTSTRAP_KEY_REFERENCE');
  });

  it.each([
    [(b: any) => b.keys.push({ ...b.keys[0] }), 'key id'],
    [(b: any) => b.allowExternalHostAccess.push({ id: 'ledger', host: 'https://x' }), 'host id'],
    [(b: any) => (b.hosts = { ledger: { host: 'https://x' } }), 'legacy host colliding with array host'],
  ])('rejects a repeated %s with WORKFLOW_BOOTSTRAP_DUPLICATE_ID', (mutate, _label) => {
    rejects(mutate as (b: Record<string, any>) => void, 'WORKFLOW_BOOTSTRAP_DUPLICATE_ID');
  });

  it('accepts the reference behaviour switch httpRequestEnvelope as a boolean or a string boolean (SPEC §8.3)', () => {
    for (const v of [true, false, 'true', 'false'])
      expect(
        validateBootstrap({ ...example(), referenceBehaviour: { httpRequestEnvelope: v } })[0],
      ).toMatchObject({
        referenceBehaviour: { httpRequestEnvelope: v },
      });
  });

  it('rejects two records with one deploymentId', () => {
    expect(() => validateBootstrap([example(), example()])).toThrowCode(
      WorkflowError,
      'WORKFLOW_BOOTSTRAP_DUPLICATE_ID',
    );
  });

  it.each([
    [(b: any) => (b.surprise = 1), 'unknown record property'],
    [(b: any) => (b.referenceBehaviour = { notASwitch: true }), 'unknown reference behaviour switch'],
    [(b: any) => (b.referenceBehaviour = { httpRequestEnvelope: 'yes' }), 'a switch that is not a boolean'],
    [(b: any) => delete b.deploymentId, 'missing deploymentId'],
    [(b: any) => (b.keys[0].extra = 1), 'unknown key property'],
    [(b: any) => (b.keys[0].purpose = 'box'), 'unknown purpose'],
    [(b: any) => (b.allowHttpServerAccess = [{ id: 'x', port: 70000 }]), 'port over 65535'],
    [(b: any) => (b.allowHttpServerAccess = [{ id: 'x' }]), 'port missing'],
    [
      (b: any) => (b.allowHttpServerAccess = [{ id: 'x', inProcOnly: true, port: 1 }]),
      'port with inProcOnly',
    ],
    [(b: any) => (b.allowExternalHostAccess = [{ id: 'x' }]), 'http host without host'],
    [
      (b: any) => (b.allowExternalHostAccess = [{ id: 'x', transport: 'inProc' }]),
      'inProc without server id',
    ],
    [
      (b: any) => (b.allowExternalHostAccess[0].allowList = [{ method: 'TRACE', uriPattern: '/' }]),
      'bad method',
    ],
    [(b: any) => (b.allowDeploymentAccess = [{ id: 'x', access: 'both' }]), 'bad access'],
    [(b: any) => (b.enabled = 'maybe'), 'bad stringBoolean'],
    [(b: any) => (b.packaging.requiredSigners = ['']), 'empty signer'],
    [
      (b: any) => {
        b.frequency = 1000;
        b.remoteConfigurationTimeout = 1000;
      },
      'timeout not below frequency',
    ],
  ])('rejects %s with WORKFLOW_BOOTSTRAP_INVALID', (mutate, _label) => {
    rejects(mutate as (b: Record<string, any>) => void, 'WORKFLOW_BOOTSTRAP_INVALID');
  });

  it('accepts scriptTimeoutMs from 1 to MAX_SCRIPT_TIMEOUT_MS on a record (issue 28)', () => {
    for (const ms of [1, 6000, MAX_SCRIPT_TIMEOUT_MS]) {
      const b = example();
      b['scriptTimeoutMs'] = ms;
      expect(validateBootstrap(b)[0]?.scriptTimeoutMs).toBe(ms);
    }
    expect(MAX_SCRIPT_TIMEOUT_MS).toBe(600_000);
  });

  it.each([0, -1, 1.5, MAX_SCRIPT_TIMEOUT_MS + 1, '6000', true])(
    'rejects scriptTimeoutMs %j with WORKFLOW_BOOTSTRAP_INVALID naming the field',
    (ms) => {
      const details = rejects((b) => (b['scriptTimeoutMs'] = ms), 'WORKFLOW_BOOTSTRAP_INVALID');
      expect(details.map((d) => d.pointer)).toContain('/0/scriptTimeoutMs');
    },
  );

  /** The example with the packager capability granted over two directories (SPEC.md §8.5, issue 26). */
  function packagerExample(): Record<string, any> {
    const b = example();
    b['allowPackagerAccess'] = true;
    b['allowFileAccess'].push(
      { id: 'community', directoryOrFile: '/community-resources', READ: true, LIST: 'true' },
      { id: 'sources', directoryOrFile: '/workflows', READ: 'true', LIST: true, required: false },
    );
    b['data'] = { region: 'eu-1', resourceIds: ['community', 'inbox'], workflowSourceIds: ['sources'] };
    return b;
  }

  it('accepts allowPackagerAccess as a boolean or a string boolean, with its directories in data (issue 26)', () => {
    for (const v of [true, 'true']) {
      const b = packagerExample();
      b['allowPackagerAccess'] = v;
      expect(validateBootstrap(b)[0]?.allowPackagerAccess).toBe(v);
    }
    // Off, the data lists are the deployment's own data: nothing is checked.
    for (const v of [false, 'false', '${PACKAGER}']) {
      const b = packagerExample();
      b['allowPackagerAccess'] = v;
      b['data'] = { resourceIds: 'not a list' };
      expect(validateBootstrap(b)[0]?.allowPackagerAccess).toBe(v);
    }
    // Without workflowSourceIds, and with an id a variable will give (the agent substitutes first).
    const b = packagerExample();
    b['data'] = { resourceIds: ['community', '${MORE_RESOURCES}'] };
    expect(validateBootstrap(b)[0]?.data).toEqual({ resourceIds: ['community', '${MORE_RESOURCES}'] });
  });

  it.each([
    [(b: any) => delete b.data.resourceIds, '/0/data/resourceIds', 'needs data.resourceIds'],
    [(b: any) => (b.data.resourceIds = []), '/0/data/resourceIds', 'non-empty array'],
    [(b: any) => (b.data.workflowSourceIds = 'sources'), '/0/data/workflowSourceIds', 'an array'],
    [(b: any) => (b.data.resourceIds = ['community', 7]), '/0/data/resourceIds/1', 'allowFileAccess id'],
    [(b: any) => (b.data.resourceIds = ['nowhere']), '/0/data/resourceIds/0', '"nowhere" names no'],
    [
      (b: any) => delete b.allowFileAccess.find((f: any) => f.id === 'sources').LIST,
      '/0/data/workflowSourceIds/0',
      '"sources" must grant READ and LIST',
    ],
    [
      (b: any) => (b.allowFileAccess.find((f: any) => f.id === 'community').READ = false),
      '/0/data/resourceIds/0',
      '"community" must grant READ and LIST',
    ],
  ])(
    'refuses a packager directory list that does not name readable, listable allowFileAccess entries (%#, issue 26)',
    (mutate, pointer, detail) => {
      const b = packagerExample();
      mutate(b);
      expect(() => validateBootstrap(b)).toThrowCode(WorkflowError, 'WORKFLOW_BOOTSTRAP_INVALID');
      try {
        validateBootstrap(b);
      } catch (e) {
        const errors = (e as WorkflowError).details?.errors ?? [];
        expect(errors).toContainEqual({ pointer, detail: expect.stringContaining(detail) });
      }
    },
  );

  it.each(['yes', 1, null])('rejects allowPackagerAccess %j with WORKFLOW_BOOTSTRAP_INVALID', (v) => {
    const details = rejects((b) => (b['allowPackagerAccess'] = v), 'WORKFLOW_BOOTSTRAP_INVALID');
    expect(details.map((d) => d.pointer)).toContain('/0/allowPackagerAccess');
  });

  it('takes servePackagedAsset as a plain allowFileAccess id, as reference bootstraps write it (issue 28)', () => {
    const b = example();
    b['allowHttpServerAccess'] = [{ id: 'ui', port: 8081, servePackagedAsset: 'ui-zip' }];
    b['allowFileAccess'].push({ id: 'ui-zip', directoryOrFile: '/data/ui.zip', READ: true });
    expect(validateBootstrap(b)[0]?.allowHttpServerAccess?.[0]).toEqual({
      id: 'ui',
      port: 8081,
      serveFromPackagedAsset: { packagedAssetFileId: 'ui-zip' },
    });
  });

  it.each([
    [
      (b: any) => (b.allowHttpServerAccess = [{ id: 's', port: 1, servePackagedAsset: '' }]),
      'empty asset id',
    ],
    [
      (b: any) => (b.allowHttpServerAccess = [{ id: 's', port: 1, servePackagedAsset: 7 }]),
      'numeric asset id',
    ],
    [
      (b: any) => (b.allowHttpServerAccess = [{ id: 's', port: 1, servePackagedAsset: 'nope' }]),
      'unknown asset file id (plain form)',
    ],
    [
      (b: any) =>
        (b.allowHttpServerAccess = [
          {
            id: 's',
            port: 1,
            servePackagedAsset: 'site',
            serveFromPackagedAsset: { packagedAssetFileId: 'site' },
          },
        ]),
      'both spellings',
    ],
  ])('rejects servePackagedAsset with %s: WORKFLOW_BOOTSTRAP_INVALID', (mutate, _label) => {
    rejects(mutate as (b: Record<string, any>) => void, 'WORKFLOW_BOOTSTRAP_INVALID');
  });

  it.each([
    [
      (b: any) => (b.allowDeploymentAccess = [{ id: 'x', access: 'call', anyDeployment: true }]),
      'anyDeployment on call',
    ],
    [
      (b: any) =>
        (b.allowDeploymentAccess = [
          { id: 'x', access: 'receive', anyDeployment: 'true', deploymentIds: ['d'] },
        ]),
      'anyDeployment with ids',
    ],
    [
      (b: any) => (b.allowDeploymentAccess = [{ id: 'x', access: 'receive', startupWaitTimeoutMs: 5 }]),
      'wait timeout on receive',
    ],
    [
      (b: any) =>
        (b.allowHttpServerAccess = [
          { id: 's', port: 1, serveFromPackagedAsset: { packagedAssetFileId: 'nope' } },
        ]),
      'unknown asset file id',
    ],
  ])('rejects %s with WORKFLOW_BOOTSTRAP_INVALID', (mutate, _label) => {
    rejects(mutate as (b: Record<string, any>) => void, 'WORKFLOW_BOOTSTRAP_INVALID');
  });

  it('accepts receive entries with anyDeployment and call entries with ids and a wait timeout', () => {
    const b = example();
    b['allowDeploymentAccess'] = [
      { id: 'in', access: 'receive', anyDeployment: true },
      { id: 'out', access: 'call', deploymentIds: ['d1'], startupWaitTimeoutMs: 5000 },
    ];
    expect(validateBootstrap(b)[0]?.allowDeploymentAccess).toHaveLength(2);
  });

  it('accepts one id for a call and a receive entry; the same id twice in one direction is a duplicate', () => {
    const both = [
      { id: 'peer', access: 'call', deploymentIds: ['d1'] },
      { id: 'peer', access: 'receive', deploymentIds: ['d1'] },
    ];
    const b = example();
    b['allowDeploymentAccess'] = both;
    expect(validateBootstrap(b)[0]?.allowDeploymentAccess).toHaveLength(2);
    const d = rejects(
      (r) => (r['allowDeploymentAccess'] = [...both, { id: 'peer', access: 'receive', anyDeployment: true }]),
      'WORKFLOW_BOOTSTRAP_DUPLICATE_ID',
    );
    expect(d).toEqual([
      { pointer: '/0/allowDeploymentAccess/2/id', detail: 'duplicate id "peer" for access "receive"' },
    ]);
  });

  it('rejects an empty array and a non-object', () => {
    expect(() => validateBootstrap('[]')).toThrowCode(WorkflowError, 'WORKFLOW_BOOTSTRAP_INVALID');
    expect(() => validateBootstrap('"x"')).toThrowCode(WorkflowError, 'WORKFLOW_BOOTSTRAP_INVALID');
  });

  it('reports every schema violation at once and never echoes data, headers or key material', () => {
    const b = example();
    b['keys'][0].keyHex = 'Q' + hex('AB', 62) + 'B';
    b['allowExternalHostAccess'][0].headers = { Authorization: 12345 };
    b['data'] = 'top-secret-data';
    b['agentPrivateKey'] = 42;
    try {
      validateBootstrap(b);
      expect.unreachable();
    } catch (e) {
      const err = e as WorkflowError;
      expect(err.code).toBe('WORKFLOW_BOOTSTRAP_INVALID');
      const pointers = (err.details?.errors ?? []).map((d) => d.pointer);
      expect(pointers).toEqual(
        expect.arrayContaining([
          '/0/keys/0/keyHex',
          '/0/allowExternalHostAccess/0/headers/Authorization',
          '/0/data',
          '/0/agentPrivateKey',
        ]),
      );
      const text = err.message + JSON.stringify(err.details);
      expect(text).not.toContain('top-secret-data');
      expect(text).not.toContain('12345');
      expect(text).not.toContain(hex('AB', 62));
    }
  });

  it('rejects duplicate keys in bootstrap JSON text (S65)', () => {
    expect(() =>
      validateBootstrap('{"deploymentId":"a","deploymentId":"b","remoteConfiguration":"r"}'),
    ).toThrowCode(WorkflowError, 'WORKFLOW_JSON_DUPLICATE_KEY');
  });
});
