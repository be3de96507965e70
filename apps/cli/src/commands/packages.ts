import {
  displayJson,
  displayText,
  fingerprint,
  inspectPackage,
  type FreshnessOptions,
  type PackageInspection,
  type PackageRelease,
  type RollbackVerdict,
  type VerifiedPackage,
} from '@org/oapp-format';
import type { Key } from '@org/envelope-crypto';
import { Command } from 'commander';
import type { Context } from '../context.js';
import { CliError, EXIT_FAILURE } from '../errors.js';
import { openPackageTo, packageInput, repackageTo, type Input } from '../io.js';
import { checkOutputs } from '../output-paths.js';
import { loadKey } from '../keys.js';
import { checkPolicy, resolvePolicy, type ResolvedPolicy, type RuleFailure } from '../policy.js';
import {
  addFreshnessOptions,
  freshnessFlagsOf,
  freshnessGiven,
  type FreshnessFlags,
  type FreshnessOptionValues,
} from '../release.js';
import { checkStartupContent, type StartupContent } from '../startup-check.js';
import {
  addPolicyOptions,
  addSealOptions,
  KEY_SOURCE_HELP,
  loadSealKeys,
  policyFlagsOf,
  refuseJsonWithStdout,
  type PolicyOptionValues,
  type SealFlags,
} from './shared.js';

type Done = (code: number) => void;

/**
 * Text from a package or a bootstrap (packageId, sign texts, license, key ids) in oapp-format's display form
 * (SPEC.md §6.4): quoted, with control, bidi and zero-width characters escaped, so none reaches the terminal.
 */
const quoted = displayText;

/** One signature line: its status first (SPEC.md §6.3), never "valid" alone. */
function signatureLine(s: PackageInspection['signatures'][number]): string {
  const status =
    s.status === 'invalid'
      ? 'INVALID signature'
      : s.status === 'trusted'
        ? `valid, ${s.signer} signer ${quoted(s.signerId ?? '')}`
        : 'valid signature, UNKNOWN SIGNER (no policy names this key; its text is its own claim)';
  return `  ${s.fingerprint}  ${status}
      text ${quoted(s.signText)}`;
}

/** What a release says, in display form: `format 2, sequence 12, expires "…"`. */
function releaseText(r: {
  formatVersion: number;
  sequence: number | null;
  expiresAt: string | null;
}): string {
  const sequence = r.sequence === null ? 'no sequence (unversioned)' : `sequence ${r.sequence}`;
  const expires = r.expiresAt === null ? 'never expires' : `expires ${quoted(r.expiresAt)}`;
  return `format ${r.formatVersion}, ${sequence}, ${expires}`;
}

/** What `--newest SEQ` without a digest leaves open, and how to close it. */
const NOT_COMPARED = 'same sequence; content not compared (give --newest SEQ:SHA256)';

/**
 * Whether the content was compared (JSON `contentCompared`, as /workflow-inspect answers it): present when the
 * package's sequence equals `--newest`'s, `true` with a digest, `false` without one (the package's own stands in,
 * so `same` says only that the sequence is the same: an agent that accepted other content under it would refuse
 * the package, POLICY_SEQUENCE_REUSED). Absent when the sequences differ or `--newest` is not given.
 */
function contentComparedOf(f: FreshnessFlags, sequence: number | null): { contentCompared?: boolean } {
  const n = f.newest;
  return n !== undefined && sequence === n.sequence ? { contentCompared: n.contentSha256 !== undefined } : {};
}

type Rollback = RollbackVerdict & { readonly contentCompared?: boolean };

function rollbackText(r: Rollback): string {
  if (r.code !== null)
    return `REFUSED ${r.code}: ${r.message ?? ''}${r.contentCompared === false ? ` (${NOT_COMPARED})` : ''}`;
  return r.contentCompared === false ? NOT_COMPARED : `${r.verdict} (accepted)`;
}

/**
 * The freshness inputs of `--newest`/`--now` for a package whose content has `contentSha256`: `--newest SEQ`
 * without a digest is judged with the package's own (and its verdict then carries `contentCompared: false`).
 */
function freshnessOptionsOf(f: FreshnessFlags, contentSha256: string): FreshnessOptions {
  const n = f.newest;
  return {
    newest:
      n === undefined ? undefined : { sequence: n.sequence, contentSha256: n.contentSha256 ?? contentSha256 },
    now: f.now,
  };
}

function inspectionText(i: PackageInspection & { rollback: Rollback | null }, withPolicy: boolean): string {
  const lines = [
    `package     ${quoted(i.packageId)} (${i.kind}, ${i.format})`,
    `created     ${quoted(i.createdAt)}`,
    `release     ${releaseText(i)}`,
    ...(i.rollback === null ? [] : [`rollback    ${rollbackText(i.rollback)}`]),
    `content     ${quoted(i.content.mediaType)}, ${i.content.size} bytes, sha256 ${i.content.sha256}`,
    `packager    ${i.packager.fingerprint}  ${i.packager.publicKeyHex}`,
    `recipients  ${i.recipients.length}: ${i.recipients.map((r) => r.fingerprint).join(' ')}`,
    `signatures  ${i.signatures.length}${withPolicy ? ' (marked against the given policy)' : ' (no policy given: every signer is unknown)'}`,
    ...i.signatures.map(signatureLine),
    `license     ${i.license === null ? 'none' : displayJson(i.license)}`,
    `envelope    ${i.envelope.length} link(s)`,
    `payload     ${i.payload.aead}, chunks of ${i.payload.chunkSize} bytes, ${i.payload.ciphertextBytes} bytes`,
  ];
  return lines.join('\n');
}

/** True when any policy option was given. */
function policyGiven(o: PolicyOptionValues): boolean {
  return Object.values(policyFlagsOf(o)).some((v) => (Array.isArray(v) ? v.length > 0 : v !== undefined));
}

/** `oapp inspect`: like POST /workflow-inspect. */
export function inspectCommand(ctx: Context, done: Done): Command {
  return addFreshnessOptions(
    addPolicyOptions(
      new Command('inspect')
        .description(
          "show what a package says without any secret key; checks every signature, decides nothing (with a policy: marks which signers it names; with a policy, --newest or --now: the agent's rollback verdict)",
        )
        .argument('<package>', '.oapp file, or - for stdin'),
    ),
  )
    .option(
      '--json',
      'print the /workflow-inspect response {ok, ...} (with a policy, --newest or --now: and rollback)',
    )
    .addHelpText(
      'after',
      '\nExamples:\n  oapp inspect hello.oapp\n  oapp inspect hello.oapp --bootstrap bootstrap.json --newest 1767225600',
    )
    .action(async (pkg: string, o: VerifyOptions) => {
      const fresh = freshnessFlagsOf(o);
      const policy = policyGiven(o)
        ? (await resolvePolicy(policyFlagsOf(o), ctx.env, (m) => ctx.warn(m))).policy
        : undefined;
      const input = await packageInput(pkg);
      try {
        // A `--newest` without a digest takes the package's own (read by a first pass over its prefix).
        const needSha = fresh.newest !== undefined && fresh.newest.contentSha256 === undefined;
        const given = freshnessGiven(fresh) && !needSha ? freshnessOptionsOf(fresh, '') : undefined;
        const first = await inspectPackage(input.open(), { policy, freshness: given });
        const judged = needSha
          ? await inspectPackage(input.open(), {
              policy,
              freshness: freshnessOptionsOf(fresh, first.content.sha256),
            })
          : first;
        const rollback: Rollback | null =
          judged.rollback === null
            ? null
            : { ...judged.rollback, ...contentComparedOf(fresh, judged.sequence) };
        const inspection = { ...judged, rollback };
        if (o.json === true) ctx.printJson({ ok: true, ...inspection });
        else ctx.print(inspectionText(inspection, policy !== undefined));
      } finally {
        await input.dispose();
      }
      done(0);
    });
}

function packagePathOf(given: string | undefined, resolved: ResolvedPolicy): string {
  if (given !== undefined) return given;
  if (resolved.packagePath !== undefined) return resolved.packagePath;
  throw new CliError(
    'CLI_USAGE',
    'name the package (or give --bootstrap, whose remoteConfiguration names it)',
  );
}

/** The release `verify` accepted, with `contentCompared` as `inspect` gives it (see contentComparedOf). */
type VerifiedRelease = PackageRelease & { readonly contentCompared?: boolean };

function releaseOf(v: VerifiedPackage, f: FreshnessFlags): VerifiedRelease {
  return { ...v.release, ...contentComparedOf(f, v.release.sequence) };
}

function summary(v: VerifiedPackage, release: VerifiedRelease = v.release) {
  return {
    packageId: v.parsed.header.packageId,
    packager: { id: v.packager.id, fingerprint: fingerprint(v.packager.publicKey) },
    signers: v.signers,
    release,
  };
}

function releaseLines(r: VerifiedRelease): string[] {
  return [
    `  release              ${releaseText(r)}, created ${quoted(r.createdAt)}`,
    `  rollback             ${r.contentCompared === false ? NOT_COMPARED : `${r.verdict} (accepted)`}`,
  ];
}

function verifiedText(
  v: VerifiedPackage,
  content: StartupContent | undefined,
  release: VerifiedRelease = v.release,
): string {
  const names = (l: readonly { id: string }[]) =>
    l.length === 0 ? 'none' : l.map((s) => quoted(s.id)).join(', ');
  return [
    `verified: package ${quoted(v.parsed.header.packageId)}`,
    `  packager             ${quoted(v.packager.id)} (${fingerprint(v.packager.publicKey)})`,
    `  required signers     ${names(v.signers.required)}`,
    `  additional signers   ${names(v.signers.additional)}`,
    ...(v.signers.ignored === 0
      ? []
      : [
          `  unknown signers      ${v.signers.ignored} record(s) of keys the policy does not name: not verified, not counted`,
        ]),
    ...releaseLines(release),
    ...(content === undefined
      ? []
      : [`  content              compiled workflow, hash ${content.workflowHash}`]),
  ].join('\n');
}

/** Reports every failed rule: one `oapp: CODE: message` line each on stderr, and the JSON document. */
function reportFailures(
  ctx: Context,
  json: boolean | undefined,
  pkg: string,
  failures: readonly RuleFailure[],
): number {
  for (const f of failures) ctx.error(`oapp: ${f.code}: ${f.message}`);
  if (json === true) ctx.printJson({ ok: false, package: pkg, errors: failures });
  return EXIT_FAILURE;
}

interface VerifyOptions extends PolicyOptionValues, FreshnessOptionValues {
  json?: boolean;
}

/**
 * The freshness inputs of `--newest`/`--now` for `input` (a `--newest` without a digest takes the package's own
 * content digest, read from its HEADER, and the release then carries `contentCompared: false`); undefined when
 * neither was given.
 */
async function freshnessFor(input: Input, f: FreshnessFlags): Promise<FreshnessOptions | undefined> {
  if (!freshnessGiven(f)) return undefined;
  const sha =
    f.newest !== undefined && f.newest.contentSha256 === undefined
      ? (await inspectPackage(input.open())).content.sha256
      : '';
  return freshnessOptionsOf(f, sha);
}

/** Verifies `input` under the policy; on a rule failure reports them all and returns undefined. */
async function verified(
  ctx: Context,
  input: Input,
  resolved: ResolvedPolicy,
  json: boolean | undefined,
  done: Done,
  freshness?: FreshnessOptions,
): Promise<VerifiedPackage | undefined> {
  const report = await checkPolicy(input, resolved.policy, freshness);
  if (report.ok) return report.verified;
  done(reportFailures(ctx, json, input.name, report.failures));
  return undefined;
}

/** `oapp verify`. */
export function verifyCommand(ctx: Context, done: Done): Command {
  return addFreshnessOptions(
    addPolicyOptions(
      new Command('verify')
        .description(
          "verify a package against a deployment's policy without decrypting it (reports every failed rule, the rollback and expiry checks included); with --bootstrap, the agent's whole start-up check: opened with the record's key, content a canonical compiled workflow",
        )
        .argument(
          '[package]',
          ".oapp file or - (default with --bootstrap: the record's remoteConfiguration)",
        ),
    ),
  )
    .option('--json', 'print a JSON report')
    .addHelpText(
      'after',
      `\n${KEY_SOURCE_HELP}\n\nExamples:\n  oapp verify --bootstrap bootstrap.json --deployment hello-1\n` +
        '  oapp verify hello.oapp --package-id hello-app --packager packager.pub --required-signer author.pub\n' +
        '  oapp verify --bootstrap bootstrap.json --newest 1767225600 --now 2027-01-31T00:00:00Z',
    )
    .action(async (pkg: string | undefined, o: VerifyOptions) => {
      const fresh = freshnessFlagsOf(o);
      const resolved = await resolvePolicy(policyFlagsOf(o), ctx.env, (m) => ctx.warn(m));
      const input = await packageInput(packagePathOf(pkg, resolved));
      try {
        const freshness = await freshnessFor(input, fresh);
        const v = await verified(ctx, input, resolved, o.json, done, freshness);
        if (v === undefined) return;
        // With a bootstrap record, also what the agent checks next at start-up (issue 27): a package it would
        // refuse is not reported as verified.
        const content =
          resolved.deploymentId === undefined
            ? undefined
            : await checkStartupContent(input, resolved, freshness);
        const release = releaseOf(v, fresh);
        if (o.json === true)
          ctx.printJson({ ok: true, package: input.name, ...summary(v, release), ...content });
        else ctx.print(verifiedText(v, content, release));
        done(0);
      } finally {
        await input.dispose();
      }
    });
}

async function openingKey(ctx: Context, src: string | undefined, resolved: ResolvedPolicy): Promise<Key> {
  if (src !== undefined) {
    const k = await loadKey(src, { purpose: 'authenticated', type: 'secret' }, '--key', ctx.env, (m) =>
      ctx.warn(m),
    );
    return k.key;
  }
  if (resolved.deploymentKey !== undefined) return resolved.deploymentKey;
  throw new CliError(
    'CLI_USAGE',
    resolved.deploymentId === undefined
      ? "--key is required: this deployment's authenticated secret key"
      : `deployment "${resolved.deploymentId}" does not hold exactly one authenticated secret key: give --key`,
  );
}

interface OpenOptions extends VerifyOptions {
  output: string;
  key?: string;
}

/** `oapp open`. */
export function openCommand(ctx: Context, done: Done): Command {
  return addPolicyOptions(
    new Command('open')
      .description(
        'verify a package, then decrypt its content; the output appears only if every check passed',
      )
      .argument('[package]', ".oapp file or - (default with --bootstrap: the record's remoteConfiguration)")
      .requiredOption('-o, --output <file>', 'where the content goes (mode 0600; - for stdout)')
      .option(
        '--key <src>',
        "this deployment's authenticated secret key (default with --bootstrap: the record's)",
      ),
  )
    .option('--json', 'print a JSON report')
    .addHelpText(
      'after',
      `\n${KEY_SOURCE_HELP}\n\nExamples:\n  oapp open --bootstrap bootstrap.json -o workflow.json\n` +
        '  oapp open hello.oapp -o - --key deployment.key --package-id hello-app --packager packager.pub',
    )
    .action(async (pkg: string | undefined, o: OpenOptions) => {
      refuseJsonWithStdout(o.json, o.output);
      checkOutputs([{ path: o.output, flag: '-o' }]);
      const resolved = await resolvePolicy(policyFlagsOf(o), ctx.env, (m) => ctx.warn(m));
      const recipientSecretKey = await openingKey(ctx, o.key, resolved);
      const input = await packageInput(packagePathOf(pkg, resolved));
      try {
        if ((await verified(ctx, input, resolved, o.json, done)) === undefined) return;
        const { verified: v, bytes } = await openPackageTo(
          input,
          { policy: resolved.policy, recipientSecretKey, kind: 'app' },
          o.output,
          { mode: 0o600 },
        );
        if (o.json === true)
          ctx.printJson({ ok: true, package: input.name, output: o.output, bytes, ...summary(v) });
        done(0);
      } finally {
        await input.dispose();
      }
    });
}

interface EnvelopeOptions extends OpenOptions, SealFlags {}

/** `oapp envelope`: like POST /package-envelope. */
export function envelopeCommand(ctx: Context, done: Done): Command {
  const cmd = addPolicyOptions(
    new Command('envelope')
      .description(
        'open a received package under your policy, add your signatures and re-encrypt it for new recipients (like POST /package-envelope)',
      )
      .argument('[package]', ".oapp file or - (default with --bootstrap: the record's remoteConfiguration)")
      .requiredOption('-o, --output <file>', 'the new .oapp file (- for stdout)')
      .option(
        '--key <src>',
        "your authenticated secret key that opens the package (default with --bootstrap: the record's)",
      ),
  );
  addSealOptions(cmd, true)
    .option('--json', 'print a JSON summary')
    .addHelpText(
      'after',
      `\n${KEY_SOURCE_HELP}\n\nExample:\n  oapp envelope hello.oapp -o hello-endorsed.oapp --bootstrap receiver.json \\\n` +
        '    --packager-key receiver-packager.key --recipient site.pub --signer reviewer.key --sign-text "reviewed"',
    )
    .action(async (pkg: string | undefined, o: EnvelopeOptions) => {
      refuseJsonWithStdout(o.json, o.output);
      checkOutputs([{ path: o.output, flag: '-o' }]);
      const resolved = await resolvePolicy(policyFlagsOf(o), ctx.env, (m) => ctx.warn(m));
      const recipientSecretKey = await openingKey(ctx, o.key, resolved);
      const keys = await loadSealKeys(ctx, o);
      const input = await packageInput(packagePathOf(pkg, resolved));
      try {
        if ((await verified(ctx, input, resolved, o.json, done)) === undefined) return;
        const bytes = await repackageTo(
          input,
          {
            open: { policy: resolved.policy, recipientSecretKey, kind: 'app' },
            packagerSecretKey: keys.packagerSecretKey,
            recipients: keys.recipients,
            signers: keys.signers,
          },
          o.output,
        );
        if (o.json === true) {
          ctx.printJson({
            ok: true,
            output: o.output,
            bytes,
            packageId: resolved.policy.packageId,
            recipients: keys.recipients.length,
            signaturesAdded: keys.signers.length,
          });
        }
        done(0);
      } finally {
        await input.dispose();
      }
    });
  return cmd;
}
