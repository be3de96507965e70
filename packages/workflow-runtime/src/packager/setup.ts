/**
 * A granted deployment's packager set-up at deployment start (ADR 0136; compiler SPEC.md §8.5): the capability must
 * be there, every step's `data.packagerOperation` must be one it knows, and `data.resourceIds` /
 * `data.workflowSourceIds` become directories through the record's `allowFileAccess` entries. Nothing here reads a
 * file: paths are resolved (real path, type), as for every other entry.
 */
import type { DeploymentRecord } from '@org/workflow-compiler';
import type { StepInfo } from '@org/workflow-engine';
import { AgentError } from '../errors.js';
import { resolveAccess, type FileAccess } from '../files/access.js';
import type { Output } from '../output.js';
import type { PackagerCapability, PackagerDirs } from './capability.js';

/** What a granted deployment's packager routes need: the capability and the directories resolved at start. */
export interface PackagerBinding {
  readonly capability: PackagerCapability;
  readonly dirs: PackagerDirs;
}

/** The two `data` members that name directories, in the order the packager searches them. */
const LISTS = ['resourceIds', 'workflowSourceIds'] as const;

const quote = (s: string) => JSON.stringify(s.length > 100 ? `${s.slice(0, 100)}…` : s);

function invalid(deploymentId: string, why: string): AgentError {
  return new AgentError('AGENT_PACKAGER_INVALID', `deployment "${deploymentId}" allowPackagerAccess: ${why}`);
}

function idsOf(record: DeploymentRecord, list: (typeof LISTS)[number]): string[] {
  const raw = (record.data ?? {})[list];
  if (raw === undefined && list === 'workflowSourceIds') return [];
  if (!Array.isArray(raw) || raw.some((id) => typeof id !== 'string' || id === ''))
    throw invalid(record.deploymentId, `data.${list} must be an array of allowFileAccess ids`);
  if (list === 'resourceIds' && raw.length === 0)
    throw invalid(record.deploymentId, 'data.resourceIds must name at least one allowFileAccess entry');
  return raw as string[];
}

/** The entry an id names: present, `READ` and `LIST`, no `patterns` (they would not narrow what the packager reads). */
function entryOf(
  record: DeploymentRecord,
  files: ReadonlyMap<string, FileAccess>,
  list: string,
  id: string,
): FileAccess {
  const where = `data.${list} names ${quote(id)}`;
  const entry = files.get(id);
  if (entry === undefined)
    throw invalid(record.deploymentId, `${where}, which is not an allowFileAccess entry`);
  if (!entry.read || !entry.list)
    throw invalid(record.deploymentId, `${where}, whose allowFileAccess entry must grant READ and LIST`);
  if (entry.patterns.length > 0)
    throw invalid(
      record.deploymentId,
      `${where}, whose allowFileAccess entry has patterns; the packager reads any resource below it, so remove them`,
    );
  return entry;
}

/**
 * `data.callerTokenHashes` (ADR 0140): undefined when absent, else its records one a line, checked by the
 * capability. An entry is one record: a string without line or record separators.
 */
function callerTokensOf(record: DeploymentRecord, capability: PackagerCapability): string | undefined {
  const raw = (record.data ?? {})['callerTokenHashes'];
  if (raw === undefined) return undefined;
  const where = 'data.callerTokenHashes';
  if (
    !Array.isArray(raw) ||
    raw.length === 0 ||
    raw.some((r) => typeof r !== 'string' || r.trim() === '' || /[\r\n;]/.test(r))
  )
    throw invalid(
      record.deploymentId,
      `${where} must be a non-empty array of token hash records, one per entry`,
    );
  if (capability.checkCallerTokens === undefined)
    throw invalid(
      record.deploymentId,
      `${where} is set, but this runtime's packager cannot check caller tokens`,
    );
  const text = (raw as string[]).join('\n');
  try {
    capability.checkCallerTokens(text, where);
  } catch (err) {
    // The capability's message names the field and the line (= the entry, from 1), never the record's text.
    const message = err instanceof Error ? err.message : 'refused';
    throw invalid(record.deploymentId, message);
  }
  return text;
}

/** Steps must name an operation the capability has. */
function checkOperations(
  deploymentId: string,
  steps: readonly StepInfo[],
  capability: PackagerCapability,
): void {
  for (const step of steps) {
    const op = step.packagerOperation;
    if (op === undefined) continue;
    if (typeof op === 'string' && capability.operations.includes(op)) continue;
    const named = typeof op === 'string' ? quote(op) : `a ${op === null ? 'null' : typeof op}`;
    throw invalid(
      deploymentId,
      `step ${quote(step.stepId)} declares data.packagerOperation ${named}, which is not an operation of the packager (${capability.operations.join(', ')})`,
    );
  }
}

/**
 * The packager binding of a deployment whose record grants it (`allowPackagerAccess`; for any other deployment
 * nothing is checked or resolved: no path of a resource directory is even looked at). Logs one
 * `packager capability` line naming the directories, and one line per optional directory missing and skipped.
 *
 * @throws AgentError `AGENT_PACKAGER_UNAVAILABLE` (granted, but the runtime has no capability),
 *   `AGENT_PACKAGER_INVALID` (an unknown operation; a directory list or entry that breaks the rules, naming the id;
 *   `data.callerTokenHashes` that is not a list of token hash records, naming the entry, never its text),
 *   `AGENT_PACKAGER_RESOURCES_MISSING` (the first resource directory does not exist, naming its path),
 *   `AGENT_FILE_ACCESS_INVALID` (an entry's path leaves the runtime's file root).
 */
export function packagerBindingOf(
  record: DeploymentRecord,
  steps: readonly StepInfo[],
  files: ReadonlyMap<string, FileAccess>,
  capability: PackagerCapability | undefined,
  output: Output,
): PackagerBinding {
  const deploymentId = record.deploymentId;
  if (capability === undefined)
    throw new AgentError(
      'AGENT_PACKAGER_UNAVAILABLE',
      `deployment "${deploymentId}" has allowPackagerAccess, but this runtime has no packager capability`,
    );
  checkOperations(deploymentId, steps, capability);
  const callerTokenHashes = callerTokensOf(record, capability);
  const found: Record<(typeof LISTS)[number], string[]> = { resourceIds: [], workflowSourceIds: [] };
  for (const list of LISTS) {
    idsOf(record, list).forEach((id, i) => {
      const entry = entryOf(record, files, list, id);
      const now = resolveAccess(entry);
      if (now !== undefined && now.fileName !== undefined)
        throw invalid(deploymentId, `data.${list} names ${quote(id)}, which is a file, not a directory`);
      if (now !== undefined) return void found[list].push(now.dir);
      if (list === 'resourceIds' && i === 0)
        throw new AgentError(
          'AGENT_PACKAGER_RESOURCES_MISSING',
          `deployment "${deploymentId}": the first resource directory ${entry.path} (allowFileAccess ${quote(id)}) does not exist`,
        );
      output.info('packager directory missing; skipped', { deploymentId, id, dir: entry.path });
    });
  }
  const dirs: PackagerDirs = Object.freeze({
    resourceDirs: Object.freeze(found.resourceIds),
    workflowSourceDirs: Object.freeze(found.workflowSourceIds),
    ...(callerTokenHashes === undefined ? {} : { callerTokenHashes }),
  });
  output.info('packager capability', {
    deploymentId,
    steps: steps.filter((s) => s.packagerOperation !== undefined).length,
    resourceDirs: dirs.resourceDirs.join(','),
    workflowSourceDirs: dirs.workflowSourceDirs.join(','),
    // How many caller tokens are configured; never their records.
    callerTokens: callerTokenHashes === undefined ? 0 : callerTokenHashes.split('\n').length,
  });
  return { capability, dirs };
}
