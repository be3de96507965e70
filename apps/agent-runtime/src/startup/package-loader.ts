import { createReadStream, statSync } from 'node:fs';
import { open, readFile } from 'node:fs/promises';
import { dirname, isAbsolute, resolve } from 'node:path';
import { parseKey, type Key } from '@org/envelope-crypto';
import { MAGIC, openPackage, policyFromBootstrap, type PackageRelease } from '@org/oapp-format';
import { compileWorkflow, readPackagedWorkflow, type DeploymentRecord } from '@org/workflow-compiler';
import { AgentError, isCodedError } from '@org/workflow-runtime';
import { withContext } from '@org/workflow-runtime/internal';
import type { RememberedRelease, ReleaseStore } from './release-store.js';

/** Read size of a package file: 1 MiB reads open a 64 MiB package ~15% faster than the default 64 KiB. */
const PACKAGE_READ_BYTES = 1024 * 1024;

/** Options of {@link loadWorkflow}. */
export interface LoadWorkflowOptions {
  /** `AGENT_ALLOW_UNPACKAGED`: accept a plain workflow JSON file (development only). */
  readonly allowUnpackaged: boolean;
  /** Largest package plaintext. */
  readonly maxPackageBytes: number;
  /** Directory relative `remoteConfiguration` paths resolve against (the working directory). */
  readonly baseDir: string;
  /**
   * The newest release accepted before, per package id (ADR 0144); absent: none is remembered, so rollback is
   * checked only against `packaging.minimumSequence`.
   */
  readonly releases?: ReleaseStore | undefined;
  /** The clock a package's `expiresAt` is compared with (tests); default `Date.now`. */
  readonly now?: (() => number) | undefined;
}

/** A package release the agent accepted, with what it was compared against (the start-up report). */
export interface AcceptedRelease extends PackageRelease {
  readonly packageId: string;
  /** SHA-256 of the package content, 64 hex digits. */
  readonly contentSha256: string;
  /** `packaging.minimumSequence`, or undefined. */
  readonly minimumSequence: number | undefined;
  /** `packaging.allowDowngradeTo`, or undefined. */
  readonly allowDowngradeTo: number | undefined;
  /** `packaging.clockSkewSeconds`, or undefined (the format's default, 300). */
  readonly clockSkewSeconds: number | undefined;
  /** The newest release remembered before this start, or undefined. */
  readonly newestBefore: RememberedRelease | undefined;
}

/** A verified (or, in development, compiled) workflow ready for the engine. */
export interface LoadedWorkflow {
  readonly workflow: unknown;
  readonly source: 'package' | 'unpackaged';
  /** The package id for packages. */
  readonly packageId?: string | undefined;
  /** For packages: the release and the freshness verdict (issue 29 §1). */
  readonly release?: AcceptedRelease | undefined;
}

const MAGIC_PREFIX = MAGIC.length;

/** A record's `remoteConfiguration` file: the path tried and what it was resolved from. */
interface ConfigurationFile {
  readonly deploymentId: string;
  /** The absolute path read. */
  readonly path: string;
  /** `remoteConfiguration` as the record gives it. */
  readonly ref: string;
  readonly baseDir: string;
}

function fileOf(record: DeploymentRecord, baseDir: string): ConfigurationFile {
  const ref = record.remoteConfiguration;
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(ref)) {
    throw new AgentError(
      'AGENT_REMOTE_CONFIGURATION_UNSUPPORTED',
      `deployment "${record.deploymentId}": remoteConfiguration must be a local file path; URLs are not supported`,
    );
  }
  return { deploymentId: record.deploymentId, path: resolve(baseDir, ref), ref, baseDir };
}

/**
 * `AGENT_REMOTE_CONFIGURATION_UNREADABLE` naming the path tried, the base directory and the errno code (issue 27):
 * names only, never a byte of the file. Paths are JSON-quoted, so a control character in one stays visible.
 */
function unreadable(file: ConfigurationFile, err: unknown): AgentError {
  const errno = (err as NodeJS.ErrnoException | undefined)?.code ?? 'error';
  const from = isAbsolute(file.ref)
    ? `an absolute path (base directory ${JSON.stringify(file.baseDir)} not used)`
    : `${JSON.stringify(file.ref)} resolved against the base directory ${JSON.stringify(file.baseDir)}`;
  return new AgentError(
    'AGENT_REMOTE_CONFIGURATION_UNREADABLE',
    `deployment "${file.deploymentId}": remoteConfiguration cannot be read (${errno}): tried ${JSON.stringify(file.path)}, ${from}`,
  );
}

async function readPrefix(file: ConfigurationFile): Promise<Uint8Array> {
  try {
    const size = statSync(file.path).size;
    if (size === 0) return new Uint8Array();
    const handle = await open(file.path, 'r');
    try {
      const buf = new Uint8Array(Math.min(size, MAGIC_PREFIX));
      await handle.read(buf, 0, buf.length, 0);
      return buf;
    } finally {
      await handle.close();
    }
  } catch (err) {
    throw unreadable(file, err);
  }
}

/** The deployment's own key: exactly one `authenticated` secret key in `keys`. */
export function deploymentKey(record: DeploymentRecord): Key {
  const own = (record.keys ?? []).filter((k) => k.purpose === 'authenticated' && k.type === 'secret');
  if (own.length !== 1) {
    throw new AgentError(
      'AGENT_DEPLOYMENT_KEY_INVALID',
      `deployment "${record.deploymentId}": keys must hold exactly one authenticated secret key (the deployment key), found ${own.length}`,
    );
  }
  return parseKey(own[0]!);
}

async function openVerified(
  record: DeploymentRecord,
  path: string,
  options: LoadWorkflowOptions,
): Promise<LoadedWorkflow> {
  if (record.packaging === undefined) {
    throw new AgentError(
      'AGENT_PACKAGING_MISSING',
      `deployment "${record.deploymentId}": a package needs a packaging block to be verified`,
    );
  }
  // The policy carries packaging.minimumSequence, allowDowngradeTo and clockSkewSeconds (issue 29 §1).
  const policy = policyFromBootstrap(record.packaging, record.keys ?? []);
  const recipientSecretKey = deploymentKey(record);
  const newestBefore = options.releases?.newest(policy.packageId);
  // Read into memory; openPackage returns content only after every check, payload and content hash
  // included, has passed (S85). Nothing is compiled, installed or run before that. The freshness check (floor,
  // rollback, reused sequence, expiry) runs after the stanza opened and before the payload is read.
  const { content, release, parsed } = await openPackage(
    createReadStream(path, { highWaterMark: PACKAGE_READ_BYTES }),
    {
      policy,
      recipientSecretKey,
      kind: 'app',
      maxPlaintextBytes: options.maxPackageBytes,
      freshness: { newest: newestBefore, now: new Date((options.now ?? Date.now)()) },
    },
  );
  // oapp-format SPEC.md §5.4 (ADR 0085): app content is the JCS form of a compiled workflow, nothing else.
  return {
    workflow: readPackagedWorkflow(content),
    source: 'package',
    packageId: policy.packageId,
    release: {
      ...release,
      packageId: policy.packageId,
      contentSha256: parsed.header.content.sha256.toLowerCase(),
      minimumSequence: policy.minimumSequence,
      allowDowngradeTo: policy.allowDowngradeTo,
      clockSkewSeconds: policy.clockSkewSeconds,
      newestBefore,
    },
  };
}

async function compileUnpackaged(file: ConfigurationFile): Promise<LoadedWorkflow> {
  const bytes = await readFile(file.path).catch((err: unknown) => {
    throw unreadable(file, err);
  });
  const { workflow } = await compileWorkflow(bytes, { resourceDirs: [dirname(file.path)] });
  return { workflow, source: 'unpackaged' };
}

/**
 * Loads a record's `remoteConfiguration`: an `.oapp` package (a `.oapp` name or the oapp magic) is
 * verified against the record's `packaging` block and `keys` before anything is decrypted into use; a
 * plain workflow JSON file is compiled only when `allowUnpackaged` is set.
 * A package's release is checked against `packaging.minimumSequence` and the newest release `options.releases`
 * remembers for its package id (nothing is remembered here: {@link verifyDeployments} does that once every record
 * passed).
 * @throws {@link AgentError} `AGENT_REMOTE_CONFIGURATION_*`, `AGENT_PACKAGING_MISSING`,
 *   `AGENT_DEPLOYMENT_KEY_INVALID`, `AGENT_UNPACKAGED_REFUSED`, `AGENT_RELEASE_STATE_UNREADABLE`; `FORMAT_*`,
 *   `CRYPTO_*`, `POLICY_*` (`POLICY_BELOW_MINIMUM`, `POLICY_ROLLBACK`, `POLICY_SEQUENCE_REUSED`, `POLICY_EXPIRED`) from
 *   oapp-format and `WORKFLOW_*` from workflow-compiler (`WORKFLOW_NOT_COMPILED`, `WORKFLOW_NOT_CANONICAL` for
 *   package content that is not the canonical form of a compiled workflow), each with the deployment id in front.
 */
export async function loadWorkflow(
  record: DeploymentRecord,
  options: LoadWorkflowOptions,
): Promise<LoadedWorkflow> {
  const file = fileOf(record, options.baseDir);
  const prefix = await readPrefix(file);
  const isPackage =
    file.path.endsWith('.oapp') || (prefix.length === MAGIC.length && MAGIC.every((b, i) => prefix[i] === b));
  if (!isPackage && !options.allowUnpackaged) {
    throw new AgentError(
      'AGENT_UNPACKAGED_REFUSED',
      `deployment "${record.deploymentId}": remoteConfiguration is not an .oapp package; plain workflow JSON runs only with AGENT_ALLOW_UNPACKAGED=true`,
    );
  }
  try {
    return isPackage ? await openVerified(record, file.path, options) : await compileUnpackaged(file);
  } catch (err) {
    if (isCodedError(err) && err.name !== 'AgentError')
      throw withContext(err, `deployment "${record.deploymentId}"`);
    throw err;
  }
}
