import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { HELLO_WORKFLOW, keyHex, oapp, tempDir, writeKeyPair } from './helpers.js';

// Issue 29 §1 from the command line: `package` writes the release (format 2 by default, `--sequence`,
// `--expires-at`/`--expires-in`, `--format-version 1` for old readers); `inspect` and `verify` show it and, given
// a policy and what an agent remembers (`--newest`) and its clock (`--now`), the rollback verdict.
// Key files are made in-process (keys.test.ts runs `oapp keygen`); a test's independent runs go side by side.

const dir = tempDir();
const run = (args: string[]) => oapp(args, { cwd: dir });
const seal = ['--package-id', 'hello-app', '--packager-key', 'packager.key', '--recipient', 'deployment.pub'];
const signed = [...seal, '--signer', 'author.key', '--sign-text', 'release'];
const policy = ['--package-id', 'hello-app', '--packager', 'packager.pub', '--required-signer', 'author.pub'];
const DAY_MS = 86_400_000;

/** Packages the hello workflow into `file` with `extra` options; returns the `--json` summary. */
async function pack(file: string, extra: string[] = []) {
  const r = await run(['package', 'workflow.json', '-o', file, '--json', ...signed, ...extra]);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return r.json();
}

/** A bootstrap record for the package with `packaging` extras (minimumSequence, …). */
function bootstrap(file: string, packaging: Record<string, unknown>, pkg = 'seq7.oapp'): void {
  const key = (id: string, purpose: string, type: string, f: string) => ({
    id,
    purpose,
    type,
    keyHex: keyHex(join(dir, f)),
  });
  writeFileSync(
    join(dir, file),
    JSON.stringify([
      {
        deploymentId: 'hello-1',
        remoteConfiguration: pkg,
        keys: [
          key('packager', 'authenticated', 'public', 'packager.pub'),
          key('author', 'sign', 'public', 'author.pub'),
          key('deployment', 'authenticated', 'secret', 'deployment.key'),
        ],
        packaging: {
          packageId: 'hello-app',
          packagerIdentities: ['packager'],
          requiredSigners: ['author'],
          ...packaging,
        },
      },
    ]),
  );
}

let seven: { createdAt: string; expiresAt: string; sequence: number };
let sha7 = '';

beforeAll(async () => {
  for (const k of ['packager', 'deployment']) writeKeyPair(dir, k, 'authenticated');
  writeKeyPair(dir, 'author', 'sign');
  writeFileSync(join(dir, 'workflow.json'), JSON.stringify(HELLO_WORKFLOW));
  seven = await pack('seq7.oapp', ['--sequence', '7', '--expires-in', '30d']);
  sha7 = (await run(['inspect', 'seq7.oapp', '--json'])).json().content.sha256;
});

describe('oapp package: the release', () => {
  it('--sequence and --expires-in are written (format 2); --json reports them as the package says them', () => {
    expect(seven).toMatchObject({ ok: true, formatVersion: 2, sequence: 7 });
    expect(Date.parse(seven.expiresAt) - Date.parse(seven.createdAt)).toBe(30 * DAY_MS);
  });

  it('by default: format 2, the sequence the creation time in whole seconds, no expiry', async () => {
    const j = await pack('default.oapp');
    expect(j).toMatchObject({ formatVersion: 2, expiresAt: null });
    expect(j.sequence).toBe(Math.floor(Date.parse(j.createdAt) / 1000));
  });

  it('--expires-at takes a UTC time with or without milliseconds', async () => {
    const j = await pack('at.oapp', ['--expires-at', '2099-01-31T12:00:00Z', '--sequence', '0']);
    expect(j).toMatchObject({ sequence: 0, expiresAt: '2099-01-31T12:00:00.000Z' });
  });

  it('--format-version 1 writes the older format: no sequence, no expiry', async () => {
    const j = await pack('v1.oapp', ['--format-version', '1']);
    expect(j).toMatchObject({ formatVersion: 1, sequence: null, expiresAt: null });
    const shown = await run(['inspect', 'v1.oapp', '--json']);
    expect(shown.json()).toMatchObject({ format: 'oapp/v1', formatVersion: 1, sequence: null });
  });

  it.each([
    [['--sequence', '-1'], /--sequence must be a whole number/],
    [['--sequence', '1.5'], /--sequence must be a whole number/],
    [['--sequence', '9007199254740992'], /--sequence must be a whole number from 0 to 9007199254740991/],
    [['--expires-at', 'tomorrow'], /--expires-at must be a UTC time/],
    [['--expires-at', '2027-02-30T00:00:00Z'], /--expires-at must be a UTC time/],
    [['--expires-at', '2020-01-01T00:00:00Z'], /is not later than now/],
    [['--expires-in', '4w'], /--expires-in must be a whole number of days, hours or minutes/],
    [['--expires-in', '1d', '--expires-at', '2099-01-01T00:00:00Z'], /exclude each other/],
    [['--format-version', '1', '--sequence', '3'], /format 1 has no sequence and no expiry/],
    [['--format-version', '3'], /Allowed choices are 1, 2/],
  ])('%j → exit 2, CLI_USAGE, nothing written', async (extra, message) => {
    const r = await run(['package', 'workflow.json', '-o', 'bad.oapp', ...signed, ...extra]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^oapp: CLI_USAGE: /);
    expect(r.stderr).toMatch(message);
    expect((await run(['inspect', 'bad.oapp'])).code).toBe(2);
  });
});

describe('oapp inspect: the release and the rollback verdict', () => {
  it('text shows the format, sequence and expiry in display form; --json carries them raw', async () => {
    const [text, json] = await Promise.all([
      run(['inspect', 'seq7.oapp']),
      run(['inspect', 'seq7.oapp', '--json']),
    ]);
    expect(text.code).toBe(0);
    expect(text.out).toContain(`release     format 2, sequence 7, expires "${seven.expiresAt}"`);
    expect(text.out).not.toMatch(/^rollback/m);
    const j = json.json();
    expect(j).toMatchObject({
      format: 'oapp/v2',
      formatVersion: 2,
      sequence: 7,
      createdAt: seven.createdAt,
      expiresAt: seven.expiresAt,
      rollback: null,
    });
  });

  it.each([
    [['--newest', '6'], { verdict: 'newer', code: null }],
    [['--newest', '7'], { verdict: 'same', code: null, contentCompared: false }],
    [
      ['--newest', `7:${'0'.repeat(64)}`],
      { verdict: 'refused', code: 'POLICY_SEQUENCE_REUSED', contentCompared: true },
    ],
    [['--newest', '8'], { verdict: 'refused', code: 'POLICY_ROLLBACK' }],
    [['--now', '2099-01-01T00:00:00Z'], { verdict: 'refused', code: 'POLICY_EXPIRED' }],
    [[], { verdict: 'first', code: null }],
  ])(
    'with a policy and %j: the verdict an agent would give, exit 0 (inspection decides nothing)',
    async (extra, want) => {
      const [json, text] = await Promise.all([
        run(['inspect', 'seq7.oapp', '--json', ...policy, ...extra]),
        run(['inspect', 'seq7.oapp', ...policy, ...extra]),
      ]);
      expect(json.json().rollback).toMatchObject(want);
      expect(text.code).toBe(0);
      expect(text.out).toMatch(
        want.code !== null
          ? new RegExp(`^rollback    REFUSED ${want.code}: `, 'm')
          : 'contentCompared' in want
            ? /^rollback {4}same sequence; content not compared \(give --newest SEQ:SHA256\)$/m
            : new RegExp(`^rollback    ${want.verdict} \\(accepted\\)$`, 'm'),
      );
    },
  );

  it('--newest SEQ:SHA256 with the package digest is the same release', async () => {
    const [json, text] = await Promise.all([
      run(['inspect', 'seq7.oapp', '--json', '--newest', `7:${sha7}`]),
      run(['inspect', 'seq7.oapp', '--newest', `7:${sha7}`]),
    ]);
    expect(json.json().rollback).toEqual({
      verdict: 'same',
      code: null,
      message: null,
      contentCompared: true,
    });
    expect(text.out).toMatch(/^rollback {4}same \(accepted\)$/m);
  });

  it('--newest SEQ of the package’s own sequence without a digest: not claimed the same release (content not compared)', async () => {
    // An agent that remembered other content under sequence 7 refuses this package (POLICY_SEQUENCE_REUSED):
    // without the digest, inspection cannot tell, and says so.
    const [json, text, expired, ...others] = await Promise.all([
      run(['inspect', 'seq7.oapp', '--json', '--newest', '7']),
      run(['inspect', 'seq7.oapp', '--newest', '7']),
      run(['inspect', 'seq7.oapp', '--newest', '7', '--now', '2099-01-01T00:00:00Z']),
      ...['6', '8'].map((n) => run(['inspect', 'seq7.oapp', '--json', '--newest', n])),
    ]);
    expect(json.json().rollback).toEqual({
      verdict: 'same',
      code: null,
      message: null,
      contentCompared: false,
    });
    expect(text.code).toBe(0);
    expect(text.out).toMatch(
      /^rollback {4}same sequence; content not compared \(give --newest SEQ:SHA256\)$/m,
    );
    expect(text.out).not.toMatch(/same \(accepted\)/);
    // Expired as well: the refusal, and that the content was not compared.
    expect(expired.out).toMatch(
      /^rollback {4}REFUSED POLICY_EXPIRED: .*\(same sequence; content not compared/m,
    );
    // Other sequences: nothing to compare, no contentCompared.
    expect(others).toHaveLength(2);
    for (const other of others) expect(other.json().rollback).not.toHaveProperty('contentCompared');
  });

  it('verify --newest SEQ without a digest: accepted, shown as a same sequence whose content was not compared', async () => {
    const [text, json, given, newer] = await Promise.all([
      run(['verify', 'seq7.oapp', ...policy, '--newest', '7']),
      run(['verify', 'seq7.oapp', ...policy, '--newest', '7', '--json']),
      run(['verify', 'seq7.oapp', ...policy, '--newest', `7:${sha7}`, '--json']),
      run(['verify', 'seq7.oapp', ...policy, '--newest', '6', '--json']),
    ]);
    expect(text.code).toBe(0);
    expect(text.out).toContain(
      '  rollback             same sequence; content not compared (give --newest SEQ:SHA256)',
    );
    expect(json.json().release).toMatchObject({ verdict: 'same', contentCompared: false });
    expect(given.json().release).toMatchObject({ verdict: 'same', contentCompared: true });
    expect(newer.json().release).not.toHaveProperty('contentCompared');
  });

  it('the bootstrap floor: a package below minimumSequence is refused (S170, no data directory anywhere)', async () => {
    bootstrap('floor.json', { minimumSequence: 8 });
    const j = (await run(['inspect', 'seq7.oapp', '--json', '--bootstrap', 'floor.json'])).json();
    expect(j.rollback).toMatchObject({ verdict: 'refused', code: 'POLICY_BELOW_MINIMUM' });
  });

  it.each([
    ['--newest', 'x'],
    ['--newest', '7:abc'],
    ['--now', '2027-01-01'],
  ])('%s %s → exit 2, CLI_USAGE', async (flag, value) => {
    const r = await run(['inspect', 'seq7.oapp', flag, value]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(new RegExp(`^oapp: CLI_USAGE: ${flag} must be`));
  });
});

describe('oapp verify: rollback, floor and expiry refuse, with their codes', () => {
  it('accepts a newer release and shows the release and the verdict; --json carries release raw', async () => {
    const [text, json] = await Promise.all([
      run(['verify', 'seq7.oapp', ...policy, '--newest', '6']),
      run(['verify', 'seq7.oapp', ...policy, '--json']),
    ]);
    expect(text.code).toBe(0);
    expect(text.out).toContain(
      `  release              format 2, sequence 7, expires "${seven.expiresAt}", created "${seven.createdAt}"`,
    );
    expect(text.out).toContain('  rollback             newer (accepted)');
    const j = json.json();
    expect(j.release).toEqual({
      formatVersion: 2,
      sequence: 7,
      createdAt: seven.createdAt,
      expiresAt: seven.expiresAt,
      verdict: 'first',
    });
  });

  it.each([
    [['--newest', '8'], 'POLICY_ROLLBACK'],
    [['--newest', `7:${'0'.repeat(64)}`], 'POLICY_SEQUENCE_REUSED'],
    [['--now', '2099-01-01T00:00:00Z'], 'POLICY_EXPIRED'],
  ])('%j → exit 1 with %s (S169, S172 from the command line)', async (extra, code) => {
    const r = await run(['verify', 'seq7.oapp', ...policy, ...extra, '--json']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`^oapp: ${code}: `));
    expect(r.json()).toMatchObject({ ok: false, errors: [{ code }] });
  });

  it('S172: within the clock skew of the expiry it is accepted; past it, refused', async () => {
    const at = Date.parse(seven.expiresAt);
    const within = new Date(at + 299_000).toISOString();
    const past = new Date(at + 301_000).toISOString();
    const [accepted, refused] = await Promise.all([
      run(['verify', 'seq7.oapp', ...policy, '--now', within]),
      run(['verify', 'seq7.oapp', ...policy, '--now', past]),
    ]);
    expect(accepted.code).toBe(0);
    expect(refused.stderr).toMatch(/^oapp: POLICY_EXPIRED: /);
  });

  it('reports a rollback together with every other failed rule', async () => {
    writeKeyPair(dir, 'other', 'sign');
    const both = await run([
      'verify',
      'seq7.oapp',
      ...policy.slice(0, 4),
      '--required-signer',
      'other.pub',
      '--newest',
      '9',
      '--json',
    ]);
    expect(both.code).toBe(1);
    expect(
      both
        .json()
        .errors.map((e: { code: string }) => e.code)
        .sort(),
    ).toEqual(['POLICY_REQUIRED_SIGNER_MISSING', 'POLICY_ROLLBACK']);
  });

  it('a format 1 package is refused once an agent remembers a release (it has no sequence)', async () => {
    const [r, first] = await Promise.all([
      run(['verify', 'v1.oapp', ...policy, '--newest', '1']),
      run(['verify', 'v1.oapp', ...policy]),
    ]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^oapp: POLICY_ROLLBACK: .*format v1/);
    expect(first.code).toBe(0);
  });

  it('S170 with --bootstrap: below the floor → exit 1, POLICY_BELOW_MINIMUM; allowDowngradeTo lets that one sequence in', async () => {
    bootstrap('floor.json', { minimumSequence: 8 });
    bootstrap('allow.json', { minimumSequence: 5, allowDowngradeTo: 7 });
    const [below, allowed, refused] = await Promise.all([
      run(['verify', '--bootstrap', 'floor.json']),
      run(['verify', '--bootstrap', 'allow.json', '--newest', '9']),
      run(['verify', '--bootstrap', 'floor.json', '--newest', '9']),
    ]);
    expect(below.code).toBe(1);
    expect(below.stderr).toMatch(/^oapp: POLICY_BELOW_MINIMUM: /);
    expect(allowed.stderr).toBe('');
    expect(allowed.code).toBe(0);
    expect(allowed.out).toContain('  rollback             allowed-downgrade (accepted)');
    expect(refused.code).toBe(1);
  });
});
