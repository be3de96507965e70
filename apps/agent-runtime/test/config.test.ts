import { describe, expect, it } from 'vitest';
import {
  DEFAULT_LIMITS as ENGINE_DEFAULT_LIMITS,
  DEFAULT_SANDBOX_IDLE_MS,
  MAX_LIMITS,
  MAX_POOLED_WORKERS,
  MAX_SANDBOX_IDLE_MS,
  MAX_SANDBOX_WORKERS,
} from '@org/workflow-engine';
import { execFileSync } from 'node:child_process';
import {
  DEFAULT_HEAP_GROWTH_PERCENT,
  loadConfig,
  MAX_HEAP_GROWTH_PERCENT,
  v8FlagsOf,
} from '../src/startup/config.js';
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { hex, makeKeys, tempDir, tuple } from './fixtures.js';

const keys = makeKeys();
const good = tuple(keys.packager, keys.agent);

function codeOf(fn: () => unknown): { code: string; message: string } {
  try {
    fn();
  } catch (err) {
    return err as { code: string; message: string };
  }
  throw new Error('did not throw');
}

describe('loadConfig', () => {
  it('takes the first argument over AGENT_BOOTSTRAP', () => {
    expect(loadConfig({ AGENT_BOOTSTRAP: 'env.json' }, ['arg.json']).bootstrap).toBe('arg.json');
    expect(loadConfig({ AGENT_BOOTSTRAP: 'env.json' }).bootstrap).toBe('env.json');
  });

  it('refuses to start without a bootstrap with AGENT_BOOTSTRAP_MISSING', () => {
    expect(codeOf(() => loadConfig({})).code).toBe('AGENT_BOOTSTRAP_MISSING');
  });

  it('ignores empty AGENT_STRING_SECRETKEYS entries after trimming (S45)', () => {
    const c = loadConfig({ AGENT_BOOTSTRAP: 'x', AGENT_STRING_SECRETKEYS: ` , ${good} ,, ` });
    expect(c.stringSecretKeys).toHaveLength(1);
  });

  it.each([
    ['a 62-character key', `${good.slice(0, 62)}/${good.slice(65)}`],
    ['no slash', good.replace('/', '')],
    ['a non-hex character', good.slice(0, -1) + 'g'],
  ])('names the entry position for %s, without key material (S45)', (_name, bad) => {
    const e = codeOf(() => loadConfig({ AGENT_BOOTSTRAP: 'x', AGENT_STRING_SECRETKEYS: `${good},${bad}` }));
    expect(e.code).toBe('AGENT_CONFIG_INVALID');
    expect(e.message).toContain('AGENT_STRING_SECRETKEYS');
    expect(e.message).toContain('entry 2');
    expect(e.message).not.toMatch(/[0-9a-f]{16}/i);
  });

  it.each([
    ['a non-hex character in the secret half', good.slice(0, -1) + 'z'],
    ['no slash', good.replace('/', '')],
  ])('refuses AGENT_BOOTSTRAP_SECRETKEY with %s (S114)', (_name, bad) => {
    const e = codeOf(() => loadConfig({ AGENT_BOOTSTRAP: 'x', AGENT_BOOTSTRAP_SECRETKEY: bad }));
    expect(e.code).toBe('AGENT_CONFIG_INVALID');
    expect(e.message).toContain('AGENT_BOOTSTRAP_SECRETKEY');
    expect(e.message).not.toMatch(/[0-9a-f]{16}/i);
  });

  it('reads AGENT_SANDBOX_WORKERS, defaulting to the engine default and bounded by the engine maximum', () => {
    expect(loadConfig({ AGENT_BOOTSTRAP: 'x' }).sandboxWorkers).toBe(MAX_POOLED_WORKERS);
    expect(loadConfig({ AGENT_BOOTSTRAP: 'x', AGENT_SANDBOX_WORKERS: '2' }).sandboxWorkers).toBe(2);
    for (const bad of ['0', '-1', '1.5', 'two', String(MAX_SANDBOX_WORKERS + 1)]) {
      const e = codeOf(() => loadConfig({ AGENT_BOOTSTRAP: 'x', AGENT_SANDBOX_WORKERS: bad }));
      expect(e.code).toBe('AGENT_CONFIG_INVALID');
      expect(e.message).toContain('AGENT_SANDBOX_WORKERS');
    }
  });

  /** Each value of `name` stops start-up with AGENT_CONFIG_INVALID naming the variable. */
  function expectRefused(name: string, values: string[]): void {
    for (const bad of values) {
      const e = codeOf(() => loadConfig({ AGENT_BOOTSTRAP: 'x', [name]: bad }));
      expect(e.code).toBe('AGENT_CONFIG_INVALID');
      expect(e.message).toContain(name);
    }
  }

  it('reads AGENT_SANDBOX_IDLE_MS, defaulting to the engine default, 0 keeping idle workers', () => {
    expect(loadConfig({ AGENT_BOOTSTRAP: 'x' }).sandboxIdleMs).toBe(DEFAULT_SANDBOX_IDLE_MS);
    expect(loadConfig({ AGENT_BOOTSTRAP: 'x', AGENT_SANDBOX_IDLE_MS: '0' }).sandboxIdleMs).toBe(0);
    expect(loadConfig({ AGENT_BOOTSTRAP: 'x', AGENT_SANDBOX_IDLE_MS: '60000' }).sandboxIdleMs).toBe(60000);
    expectRefused('AGENT_SANDBOX_IDLE_MS', ['-1', '1.5', 'off', String(MAX_SANDBOX_IDLE_MS + 1)]);
  });

  it('reads AGENT_OPTIMIZE_FOR_SIZE, false unless set to true', () => {
    expect(loadConfig({ AGENT_BOOTSTRAP: 'x' }).optimizeForSize).toBe(false);
    expect(loadConfig({ AGENT_BOOTSTRAP: 'x', AGENT_OPTIMIZE_FOR_SIZE: 'false' }).optimizeForSize).toBe(
      false,
    );
    expect(loadConfig({ AGENT_BOOTSTRAP: 'x', AGENT_OPTIMIZE_FOR_SIZE: 'true' }).optimizeForSize).toBe(true);
    const e = codeOf(() => loadConfig({ AGENT_BOOTSTRAP: 'x', AGENT_OPTIMIZE_FOR_SIZE: 'yes' }));
    expect(e.code).toBe('AGENT_CONFIG_INVALID');
    expect(e.message).toContain('AGENT_OPTIMIZE_FOR_SIZE');
  });

  it('reads AGENT_HEAP_GROWTH_PERCENT: 60 by default, 0 for V8 own factor, at most 300', () => {
    expect(DEFAULT_HEAP_GROWTH_PERCENT).toBe(60);
    expect(loadConfig({ AGENT_BOOTSTRAP: 'x' }).heapGrowthPercent).toBe(60);
    expect(loadConfig({ AGENT_BOOTSTRAP: 'x', AGENT_HEAP_GROWTH_PERCENT: '0' }).heapGrowthPercent).toBe(0);
    expect(loadConfig({ AGENT_BOOTSTRAP: 'x', AGENT_HEAP_GROWTH_PERCENT: '300' }).heapGrowthPercent).toBe(
      300,
    );
    expectRefused('AGENT_HEAP_GROWTH_PERCENT', ['-1', '1.5', 'fast', String(MAX_HEAP_GROWTH_PERCENT + 1)]);
  });

  it('sets the V8 flags the config asks for, and no flag for V8 defaults', () => {
    expect(v8FlagsOf(loadConfig({ AGENT_BOOTSTRAP: 'x' }))).toEqual(['--heap-growing-percent=60']);
    expect(v8FlagsOf({ optimizeForSize: true, heapGrowthPercent: 0 })).toEqual(['--optimize-for-size']);
    expect(v8FlagsOf({ optimizeForSize: false, heapGrowthPercent: 25 })).toEqual([
      '--heap-growing-percent=25',
    ]);
    expect(v8FlagsOf({})).toEqual([]);
  });

  it('names only flags this node V8 knows (setFlagsFromString ignores an unknown one)', () => {
    const known = execFileSync(process.execPath, ['--v8-options'], { encoding: 'utf8' });
    for (const f of v8FlagsOf({ optimizeForSize: true, heapGrowthPercent: 60 }))
      expect(known).toContain(`  ${f.split('=')[0]} (`);
  });

  it('reads AGENT_SCRIPT_TIME_MS, defaulting to the engine default and bounded by the engine maximum', () => {
    expect(loadConfig({ AGENT_BOOTSTRAP: 'x' }).timeouts.scriptMs).toBe(ENGINE_DEFAULT_LIMITS.timeMs);
    expect(loadConfig({ AGENT_BOOTSTRAP: 'x', AGENT_SCRIPT_TIME_MS: '250' }).timeouts.scriptMs).toBe(250);
    const max = String(MAX_LIMITS.timeMs);
    expect(loadConfig({ AGENT_BOOTSTRAP: 'x', AGENT_SCRIPT_TIME_MS: max }).timeouts.scriptMs).toBe(
      MAX_LIMITS.timeMs,
    );
    for (const bad of ['0', '-1', '1.5', 'abc', String(MAX_LIMITS.timeMs + 1)]) {
      const e = codeOf(() => loadConfig({ AGENT_BOOTSTRAP: 'x', AGENT_SCRIPT_TIME_MS: bad }));
      expect(e.code).toBe('AGENT_CONFIG_INVALID');
      expect(e.message).toContain('AGENT_SCRIPT_TIME_MS');
    }
  });

  it('reads AGENT_SPLIT_TIME_MS, defaulting to the engine default and bounded by the engine maximum', () => {
    expect(loadConfig({ AGENT_BOOTSTRAP: 'x' }).timeouts.splitMs).toBe(ENGINE_DEFAULT_LIMITS.splitTimeMs);
    expect(loadConfig({ AGENT_BOOTSTRAP: 'x', AGENT_SPLIT_TIME_MS: '250' }).timeouts.splitMs).toBe(250);
    const max = String(MAX_LIMITS.splitTimeMs);
    expect(loadConfig({ AGENT_BOOTSTRAP: 'x', AGENT_SPLIT_TIME_MS: max }).timeouts.splitMs).toBe(
      MAX_LIMITS.splitTimeMs,
    );
    for (const bad of ['0', '-1', '1.5', 'abc', String(MAX_LIMITS.splitTimeMs + 1)]) {
      const e = codeOf(() => loadConfig({ AGENT_BOOTSTRAP: 'x', AGENT_SPLIT_TIME_MS: bad }));
      expect(e.code).toBe('AGENT_CONFIG_INVALID');
      expect(e.message).toContain('AGENT_SPLIT_TIME_MS');
    }
  });

  it('reads flags, host ids and limits, and refuses malformed numbers', () => {
    const c = loadConfig({
      AGENT_BOOTSTRAP: 'x',
      AGENT_ALLOW_UNPACKAGED: 'true',
      AGENT_ALLOW_PRIVATE_NETWORK_HOSTS: ' a, b ,',
      AGENT_MAX_BODY_BYTES: '2048',
    });
    expect(c.allowUnpackaged).toBe(true);
    expect(c.allowPrivateNetworkHosts).toEqual(['a', 'b']);
    expect(c.limits.rawBodyBytes).toBe(2048);
    expect(loadConfig({ AGENT_BOOTSTRAP: 'x' }).allowUnpackaged).toBe(false);
    expect(codeOf(() => loadConfig({ AGENT_BOOTSTRAP: 'x', AGENT_MAX_BODY_BYTES: '1e3' })).code).toBe(
      'AGENT_CONFIG_INVALID',
    );
    expect(codeOf(() => loadConfig({ AGENT_BOOTSTRAP: 'x', AGENT_ALLOW_UNPACKAGED: 'yes' })).code).toBe(
      'AGENT_CONFIG_INVALID',
    );
  });

  it('reads the AGENT_TCP_* bounds and refuses a queue smaller than one message', () => {
    const c = loadConfig({
      AGENT_BOOTSTRAP: 'x',
      AGENT_TCP_MAX_CONNECTIONS: '16',
      AGENT_TCP_IDLE_TIMEOUT_MS: '500',
    });
    expect(c.tcp).toMatchObject({ maxConnections: 16, idleMs: 500, maxFrameBytes: 1024 * 1024 });
    const err = codeOf(() =>
      loadConfig({
        AGENT_BOOTSTRAP: 'x',
        AGENT_TCP_MAX_MESSAGE_BYTES: '2048',
        AGENT_TCP_MAX_QUEUED_BYTES: '1024',
      }),
    );
    expect(err.code).toBe('AGENT_CONFIG_INVALID');
    expect(err.message).toContain('AGENT_TCP_MAX_QUEUED_BYTES');
    expect(codeOf(() => loadConfig({ AGENT_BOOTSTRAP: 'x', AGENT_TCP_RUNS_IN_FLIGHT: '0' })).code).toBe(
      'AGENT_CONFIG_INVALID',
    );
  });

  it('reads LOG_LEVEL (default info, any case) and refuses other values with AGENT_CONFIG_INVALID', () => {
    expect(loadConfig({ AGENT_BOOTSTRAP: 'x' }).logLevel).toBe('info');
    expect(loadConfig({ AGENT_BOOTSTRAP: 'x', LOG_LEVEL: ' DEBUG ' }).logLevel).toBe('debug');
    for (const level of ['info', 'warn', 'error'])
      expect(loadConfig({ AGENT_BOOTSTRAP: 'x', LOG_LEVEL: level }).logLevel).toBe(level);
    const err = codeOf(() => loadConfig({ AGENT_BOOTSTRAP: 'x', LOG_LEVEL: 'trace' }));
    expect(err.code).toBe('AGENT_CONFIG_INVALID');
    expect(err.message).toContain('LOG_LEVEL');
  });

  it('reads AGENT_BOOTSTRAP_ADMIN_KEYS with AGENT_BOOTSTRAP_ADMIN_THRESHOLD (default 1)', () => {
    const a = hex(keys.author, 'public');
    const b = hex(keys.reviewA, 'public');
    expect(loadConfig({ AGENT_BOOTSTRAP: 'x' }).bootstrapAdministrators).toBeUndefined();
    const one = loadConfig({ AGENT_BOOTSTRAP: 'x', AGENT_BOOTSTRAP_ADMIN_KEYS: ` ${a.toUpperCase()} ` });
    expect(one.bootstrapAdministrators?.threshold).toBe(1);
    expect(Buffer.from(one.bootstrapAdministrators!.keys[0]!.publicKey).toString('hex')).toBe(a);
    const two = loadConfig({
      AGENT_BOOTSTRAP: 'x',
      AGENT_BOOTSTRAP_ADMIN_KEYS: `${a},${b},`,
      AGENT_BOOTSTRAP_ADMIN_THRESHOLD: '2',
    });
    expect(two.bootstrapAdministrators?.keys.map((k) => k.id)).toEqual([
      'AGENT_BOOTSTRAP_ADMIN_KEYS[0]',
      'AGENT_BOOTSTRAP_ADMIN_KEYS[1]',
    ]);
    expect(two.bootstrapAdministrators?.threshold).toBe(2);
  });

  it('reads AGENT_BOOTSTRAP_ADMIN_KEYS_FILE: one key a line, # comments and blank lines ignored', () => {
    const file = join(tempDir(), 'admins.txt');
    const a = hex(keys.author, 'public');
    const b = hex(keys.reviewA, 'public');
    writeFileSync(file, `# release administrators\n\n${a}  # alice\r\n${b}\n`);
    const c = loadConfig({ AGENT_BOOTSTRAP: 'x', AGENT_BOOTSTRAP_ADMIN_KEYS_FILE: file });
    expect(c.bootstrapAdministrators?.keys.map((k) => k.id)).toEqual([
      'AGENT_BOOTSTRAP_ADMIN_KEYS_FILE line 3',
      'AGENT_BOOTSTRAP_ADMIN_KEYS_FILE line 4',
    ]);
  });

  it('refuses malformed administrator keys, both variables, and a threshold out of range (AGENT_CONFIG_INVALID)', () => {
    const a = hex(keys.author, 'public');
    const dir = tempDir();
    const empty = join(dir, 'empty.txt');
    writeFileSync(empty, '# nobody\n');
    const cases: [Record<string, string>, string][] = [
      [{ AGENT_BOOTSTRAP_ADMIN_KEYS: a.slice(2) }, 'AGENT_BOOTSTRAP_ADMIN_KEYS'],
      [{ AGENT_BOOTSTRAP_ADMIN_KEYS: `${a.slice(1)}g` }, 'AGENT_BOOTSTRAP_ADMIN_KEYS'],
      // A small-order point (the identity) and a non-canonical encoding are no one's key.
      [{ AGENT_BOOTSTRAP_ADMIN_KEYS: `01${'00'.repeat(31)}` }, 'AGENT_BOOTSTRAP_ADMIN_KEYS'],
      [{ AGENT_BOOTSTRAP_ADMIN_KEYS: 'ff'.repeat(32) }, 'AGENT_BOOTSTRAP_ADMIN_KEYS'],
      [{ AGENT_BOOTSTRAP_ADMIN_KEYS: `${a},${a.toUpperCase()}` }, 'twice'],
      [{ AGENT_BOOTSTRAP_ADMIN_KEYS: ' , ' }, 'AGENT_BOOTSTRAP_ADMIN_KEYS'],
      [{ AGENT_BOOTSTRAP_ADMIN_KEYS: a, AGENT_BOOTSTRAP_ADMIN_KEYS_FILE: empty }, 'both set'],
      [{ AGENT_BOOTSTRAP_ADMIN_KEYS_FILE: empty }, 'holds no key'],
      [{ AGENT_BOOTSTRAP_ADMIN_KEYS_FILE: join(dir, 'missing.txt') }, '(ENOENT)'],
      [{ AGENT_BOOTSTRAP_ADMIN_KEYS: a, AGENT_BOOTSTRAP_ADMIN_THRESHOLD: '2' }, 'from 1 to 1'],
      [{ AGENT_BOOTSTRAP_ADMIN_KEYS: a, AGENT_BOOTSTRAP_ADMIN_THRESHOLD: '0' }, 'from 1 to 1'],
      [{ AGENT_BOOTSTRAP_ADMIN_KEYS: a, AGENT_BOOTSTRAP_ADMIN_THRESHOLD: 'one' }, 'THRESHOLD'],
      [{ AGENT_BOOTSTRAP_ADMIN_THRESHOLD: '1' }, 'without AGENT_BOOTSTRAP_ADMIN_KEYS'],
    ];
    for (const [env, text] of cases) {
      const e = codeOf(() => loadConfig({ AGENT_BOOTSTRAP: 'x', ...env }));
      expect(e.code).toBe('AGENT_CONFIG_INVALID');
      expect(e.message).toContain(text);
    }
  });

  it('S173 a set but blank administrator variable is AGENT_CONFIG_INVALID naming it, never "no administrators"', () => {
    // `Environment=AGENT_BOOTSTRAP_ADMIN_KEYS=${ADMIN_KEYS}` with ADMIN_KEYS unset must not turn the check off.
    for (const name of [
      'AGENT_BOOTSTRAP_ADMIN_KEYS',
      'AGENT_BOOTSTRAP_ADMIN_KEYS_FILE',
      'AGENT_BOOTSTRAP_ADMIN_THRESHOLD',
      'AGENT_BOOTSTRAP_MINIMUM_SEQUENCE',
    ])
      for (const blank of ['', ' ', '\t \n']) {
        const e = codeOf(() => loadConfig({ AGENT_BOOTSTRAP: 'x', [name]: blank }));
        expect(e.code).toBe('AGENT_CONFIG_INVALID');
        expect(e.message).toContain(`${name} is set but blank`);
      }
    // Blank beside a valid key list too (the other variable of the pair).
    const a = hex(keys.author, 'public');
    const e = codeOf(() =>
      loadConfig({
        AGENT_BOOTSTRAP: 'x',
        AGENT_BOOTSTRAP_ADMIN_KEYS: a,
        AGENT_BOOTSTRAP_ADMIN_KEYS_FILE: '',
      }),
    );
    expect(e.message).toContain('AGENT_BOOTSTRAP_ADMIN_KEYS_FILE is set but blank');
    // Unset: no administrators (today's behaviour).
    expect(loadConfig({ AGENT_BOOTSTRAP: 'x' }).bootstrapAdministrators).toBeUndefined();
  });

  it('reads AGENT_BOOTSTRAP_MINIMUM_SEQUENCE and AGENT_BOOTSTRAP_ALLOW_DOWNGRADE_TO, only with administrator keys', () => {
    const a = hex(keys.author, 'public');
    const none = loadConfig({ AGENT_BOOTSTRAP: 'x', AGENT_BOOTSTRAP_ADMIN_KEYS: a });
    expect(none.bootstrapMinimumSequence).toBeUndefined();
    expect(none.bootstrapAllowDowngradeTo).toBeUndefined();
    const set = loadConfig({
      AGENT_BOOTSTRAP: 'x',
      AGENT_BOOTSTRAP_ADMIN_KEYS: a,
      AGENT_BOOTSTRAP_MINIMUM_SEQUENCE: ' 0 ',
      AGENT_BOOTSTRAP_ALLOW_DOWNGRADE_TO: '9007199254740991',
    });
    expect(set.bootstrapMinimumSequence).toBe(0);
    expect(set.bootstrapAllowDowngradeTo).toBe(Number.MAX_SAFE_INTEGER);
    const cases: [Record<string, string>, string][] = [
      [{ AGENT_BOOTSTRAP_MINIMUM_SEQUENCE: '3' }, 'without AGENT_BOOTSTRAP_ADMIN_KEYS'],
      [{ AGENT_BOOTSTRAP_ALLOW_DOWNGRADE_TO: '3' }, 'without AGENT_BOOTSTRAP_ADMIN_KEYS'],
      [{ AGENT_BOOTSTRAP_ADMIN_KEYS: a, AGENT_BOOTSTRAP_MINIMUM_SEQUENCE: '-1' }, 'MINIMUM_SEQUENCE'],
      [{ AGENT_BOOTSTRAP_ADMIN_KEYS: a, AGENT_BOOTSTRAP_MINIMUM_SEQUENCE: '1.5' }, 'MINIMUM_SEQUENCE'],
      [{ AGENT_BOOTSTRAP_ADMIN_KEYS: a, AGENT_BOOTSTRAP_MINIMUM_SEQUENCE: '9007199254740992' }, 'MINIMUM'],
      [{ AGENT_BOOTSTRAP_ADMIN_KEYS: a, AGENT_BOOTSTRAP_ALLOW_DOWNGRADE_TO: 'latest' }, 'DOWNGRADE_TO'],
      [
        {
          AGENT_BOOTSTRAP_ADMIN_KEYS: a,
          AGENT_BOOTSTRAP_MINIMUM_SEQUENCE: '5',
          AGENT_BOOTSTRAP_ALLOW_DOWNGRADE_TO: '4',
        },
        'below AGENT_BOOTSTRAP_MINIMUM_SEQUENCE',
      ],
    ];
    for (const [env, text] of cases) {
      const e = codeOf(() => loadConfig({ AGENT_BOOTSTRAP: 'x', ...env }));
      expect(e.code).toBe('AGENT_CONFIG_INVALID');
      expect(e.message).toContain(text);
    }
  });

  it('reads AGENT_BOOTSTRAP_SIGNATURE as an absolute path, and AGENT_DATA_DIR=off as no data directory', () => {
    expect(loadConfig({ AGENT_BOOTSTRAP: 'x' }).bootstrapSignature).toBeUndefined();
    expect(loadConfig({ AGENT_BOOTSTRAP: 'x', AGENT_BOOTSTRAP_SIGNATURE: 'b.sig' }).bootstrapSignature).toBe(
      resolve('b.sig'),
    );
    expect(loadConfig({ AGENT_BOOTSTRAP: 'x' }).dataDir).toBe(resolve('agent-data'));
    expect(loadConfig({ AGENT_BOOTSTRAP: 'x', AGENT_DATA_DIR: 'OFF' }).dataDir).toBeUndefined();
    expect(loadConfig({ AGENT_BOOTSTRAP: 'x', AGENT_DATA_DIR: './off' }).dataDir).toBe(resolve('off'));
  });
});
