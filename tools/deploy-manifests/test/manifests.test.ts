import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  manifestProblems,
  policyProblems,
  readManifests,
  schemaProblems,
  type Manifest,
} from '../src/check.js';

const DIR = join(import.meta.dirname, '../../../deploy/kubernetes');
const files = readdirSync(DIR).filter((f) => f.endsWith('.yaml'));
const all: Manifest[] = files.flatMap((f) => readManifests(join(DIR, f)));

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

function find(kind: string, name: string): Obj {
  const m = all.find((x) => (x.doc as Obj)['kind'] === kind && (x.doc as Obj)['metadata']?.['name'] === name);
  if (m === undefined) throw new Error(`no ${kind} ${name} in deploy/kubernetes`);
  return structuredClone(m.doc) as Obj;
}

const container = (d: Obj): Obj => d['spec']['template']['spec']['containers'][0];

describe('deploy/kubernetes', () => {
  it('has the two services', () => {
    expect(files.sort()).toEqual(['agent.yaml', 'packager.yaml']);
    expect(all.map((m) => `${(m.doc as Obj)['kind']} ${(m.doc as Obj)['metadata']['name']}`).sort()).toEqual([
      'Deployment oapp-agent',
      'Deployment oapp-packager',
      'Service oapp-agent',
      'Service oapp-packager',
    ]);
  });

  it.each(all.map((m) => [`${m.file.split('/').pop()}#${m.index}`, m] as const))(
    '%s is valid against the Kubernetes schema and the pod rules',
    (_name, m) => {
      expect(manifestProblems(m.doc)).toEqual([]);
    },
  );

  it('probes the packager on 39575 and the agent admin listener on 39576', () => {
    for (const [name, port, portName] of [
      ['oapp-packager', 39575, 'http'],
      ['oapp-agent', 39576, 'admin'],
    ] as const) {
      const c = container(find('Deployment', name));
      expect(c['ports']).toContainEqual({ name: portName, containerPort: port, protocol: 'TCP' });
      expect(c['livenessProbe']['httpGet']).toEqual({ path: '/health', port: portName });
      expect(c['readinessProbe']['httpGet']).toEqual({ path: '/ready', port: portName });
    }
    const env = container(find('Deployment', 'oapp-agent'))['env'] as Obj[];
    expect(env).toContainEqual({ name: 'AGENT_ADMIN_PORT', value: '39576' });
    expect(env).toContainEqual({ name: 'AGENT_ADMIN_BIND', value: '0.0.0.0' });
  });

  it('runs the agent as one replica, its data on a volume and its bootstrap from a Secret', () => {
    const d = find('Deployment', 'oapp-agent');
    expect(d['spec']['replicas']).toBe(1);
    expect(d['spec']['strategy']).toEqual({ type: 'Recreate' });
    const c = container(d);
    const pod = d['spec']['template']['spec'];
    const volume = (mountPath: string): Obj => {
      const mount = (c['volumeMounts'] as Obj[]).find((v) => v['mountPath'] === mountPath);
      expect(mount, mountPath).toBeDefined();
      return (pod['volumes'] as Obj[]).find((v) => v['name'] === mount!['name'])!;
    };
    const env = Object.fromEntries((c['env'] as Obj[]).map((e) => [e['name'], e['value']]));
    const data = volume(env['AGENT_DATA_DIR']);
    expect(data['emptyDir'] ?? data['persistentVolumeClaim']).toBeDefined();
    const bootstrap = volume(env['AGENT_BOOTSTRAP'].replace(/\/[^/]+$/, ''));
    expect(bootstrap['secret']['secretName']).toBe('oapp-agent-bootstrap');
    // 0440: the pod's fsGroup reads it, nobody else.
    expect(bootstrap['secret']['defaultMode']).toBe(0o440);
    expect(pod['securityContext']['fsGroup']).toBe(1000);
  });

  it('runs the packager as replicas behind a ClusterIP Service', () => {
    expect(find('Deployment', 'oapp-packager')['spec']['replicas']).toBeGreaterThan(1);
    for (const name of ['oapp-packager', 'oapp-agent']) {
      expect(find('Service', name)['spec']['type']).toBe('ClusterIP');
    }
  });
});

describe('the checker refuses', () => {
  const packager = () => find('Deployment', 'oapp-packager');

  it('a container that may run as root', () => {
    const d = packager();
    delete container(d)['securityContext']['runAsNonRoot'];
    delete d['spec']['template']['spec']['securityContext']['runAsNonRoot'];
    expect(schemaProblems(d)).toEqual([]);
    expect(policyProblems(d)).toEqual([
      '/spec/template/spec/containers/0/securityContext/runAsNonRoot: must be true',
    ]);
  });

  it('runAsUser 0, a writable root, escalation, kept capabilities, no limits, no probes', () => {
    const d = packager();
    const c = container(d);
    c['securityContext'] = { runAsNonRoot: true, runAsUser: 0, capabilities: { add: ['NET_ADMIN'] } };
    delete c['resources']['limits'];
    delete c['readinessProbe'];
    d['spec']['template']['spec']['hostNetwork'] = true;
    expect(schemaProblems(d)).toEqual([]);
    const at = '/spec/template/spec/containers/0';
    expect(policyProblems(d)).toEqual([
      '/spec/template/spec/hostNetwork: must not be true',
      `${at}/securityContext/runAsUser: must not be 0`,
      `${at}/securityContext/readOnlyRootFilesystem: must be true`,
      `${at}/securityContext/allowPrivilegeEscalation: must be false`,
      `${at}/securityContext/capabilities/drop: must include ALL`,
      `${at}/securityContext/capabilities/add: must be empty`,
      `${at}/resources/limits/cpu: missing`,
      `${at}/resources/limits/memory: missing`,
      `${at}/readinessProbe/httpGet/path: must be /ready`,
    ]);
  });

  it('an unknown field (a misspelt readOnlyRootFilesystem)', () => {
    const d = packager();
    const sc = container(d)['securityContext'];
    delete sc['readOnlyRootFilesystem'];
    sc['readOnlyRootFileSystem'] = true;
    expect(schemaProblems(d)).toEqual([
      '/spec/template/spec/containers/0/securityContext: unknown field "readOnlyRootFileSystem"',
    ]);
  });

  it('a field of the wrong type, a bad quantity and a missing required field', () => {
    const d = packager();
    const c = container(d);
    c['ports'][0]['containerPort'] = '39575';
    c['resources']['limits']['memory'] = '256 megabytes';
    delete c['image'];
    delete c['name'];
    const problems = schemaProblems(d);
    expect(problems).toContain('/spec/template/spec/containers/0/ports/0/containerPort: must be integer');
    expect(problems).toContain(
      '/spec/template/spec/containers/0/resources/limits/memory: must match format "quantity"',
    );
    expect(problems).toContain("/spec/template/spec/containers/0: must have required property 'name'");
  });

  it('a kind it has no schema for, and a wrong apiVersion', () => {
    expect(schemaProblems({ apiVersion: 'v1', kind: 'Pod' })[0]).toMatch(
      /^\/: apiVersion\/kind v1\/Pod is not one of/,
    );
    const d = packager();
    d['apiVersion'] = 'extensions/v1beta1';
    expect(schemaProblems(d)[0]).toMatch(/extensions\/v1beta1\/Deployment is not one of/);
  });

  it('a Service with an unknown port field', () => {
    const s = find('Service', 'oapp-packager');
    s['spec']['ports'][0]['hostPort'] = 39575;
    expect(schemaProblems(s)).toEqual(['/spec/ports/0: unknown field "hostPort"']);
  });
});
