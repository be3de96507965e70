import { openPackage, type FreshnessOptions } from '@org/oapp-format';
import { hashWorkflow, readPackagedWorkflow } from '@org/workflow-compiler';
import { CliError, EXIT_FAILURE, isCodedError } from './errors.js';
import type { Input } from './io.js';
import type { ResolvedPolicy } from './policy.js';

/** What the agent's start-up found in a package's content. */
export interface StartupContent {
  /** `workflow-hash/v1` of the packaged workflow (the SHA-256 of the content, which the signers signed). */
  readonly workflowHash: string;
}

/**
 * The content half of the agent's start-up check (apps/agent-runtime `loadWorkflow`), for `verify --bootstrap`:
 * the package is opened with the record's deployment key under the same limit as the agent's default
 * (`AGENT_MAX_PACKAGE_BYTES`), and its content read with workflow-compiler's `readPackagedWorkflow`, the function
 * the agent calls (oapp-format SPEC.md §5.4, ADR 0085: the canonical form of a compiled workflow, nothing else).
 * Call it after the policy check, which reports every failed rule.
 * @throws {@link CliError} `CLI_DEPLOYMENT` (exit 2) when the record does not hold exactly one authenticated secret
 *   key, which the agent needs (it refuses the record with `AGENT_DEPLOYMENT_KEY_INVALID`); the codes of
 *   oapp-format (`CRYPTO_*`, `FORMAT_*`) and workflow-compiler (`WORKFLOW_NOT_CANONICAL`, `WORKFLOW_NOT_COMPILED`,
 *   `WORKFLOW_JSON_*`, `WORKFLOW_SCHEMA_INVALID`, …) with the deployment id in front (exit 1).
 */
export async function checkStartupContent(
  input: Input,
  resolved: ResolvedPolicy,
  freshness?: FreshnessOptions,
): Promise<StartupContent> {
  const deployment = `deployment "${resolved.deploymentId ?? ''}"`;
  if (resolved.deploymentKey === undefined) {
    throw new CliError(
      'CLI_DEPLOYMENT',
      `${deployment}: keys must hold exactly one authenticated secret key (the deployment key), which the agent needs to open the package at start-up`,
    );
  }
  // The agent's default limit, imported only here: the runtime library is large and `verify` without
  // --bootstrap, `inspect` and `open` do not need it (start-up time, issue 31).
  const { DEFAULT_LIMITS } = await import('@org/workflow-runtime');
  try {
    const { content } = await openPackage(input.open(), {
      policy: resolved.policy,
      recipientSecretKey: resolved.deploymentKey,
      kind: 'app',
      maxPlaintextBytes: DEFAULT_LIMITS.maxPackageBytes,
      freshness,
    });
    return { workflowHash: hashWorkflow(readPackagedWorkflow(content)) };
  } catch (err) {
    if (!isCodedError(err)) throw err;
    // As the agent reports it: the library's code, the deployment in front.
    throw new CliError(err.code, `${deployment}: ${err.message}`, EXIT_FAILURE, { cause: err });
  }
}
