import {
  buildWorkflows,
  compileWorkflow,
  type CompiledWorkflow,
  type JsonObject,
  type WorkflowFile,
} from '@org/workflow-compiler';
import { TestRunnerError } from './errors.js';
import { compilerDetails } from './internal/compiler-details.js';

/** Input of {@link buildTestWorkflow}. */
export interface BuildTestWorkflowInput {
  /** Name of the test in messages. */
  test: string;
  /** The test's `useThisTestConfigFile`, already read inside its root: bytes, real directory and file name. */
  workflow?: { bytes: Uint8Array; dir: string; name: string };
  /** The test's `manifest`: `{ customizations }` edits `workflow`; `{ includes }` builds from several files. */
  manifest?: JsonObject;
  /** Directory that `includes[].sourceWorkflow` paths are relative to (the test's `fromDirectory`). */
  includeDir: string;
  /** Resource directories for `{ "resource": … }` processors, searched in order. */
  resourceDirs: readonly string[];
}

/**
 * Builds the workflow under test with the compiler (docs/interfaces.md §7.3, §8): a manifest with `customizations` is
 * applied to the test's workflow file; a manifest with `includes` is built from files below `includeDir`; the
 * result is compiled with the config's resource directories (every resource inlined, comments dropped).
 *
 * @throws TestRunnerError `TESTRUNNER_WORKFLOW_INVALID` wrapping any compiler error; its `details.workflowCode`
 *   is the compiler's code (for example `WORKFLOW_SCHEMA_INVALID`, `WORKFLOW_RESOURCE_NOT_FOUND`) and
 *   `details.errors` its failed fields, when it listed any.
 */
export async function buildTestWorkflow(input: BuildTestWorkflowInput): Promise<CompiledWorkflow> {
  try {
    const source = await sourceWorkflow(input);
    const { workflow } = await compileWorkflow(source, { resourceDirs: input.resourceDirs });
    return workflow;
  } catch (err) {
    if (err instanceof TestRunnerError) throw err;
    throw wrap(input.test, err);
  }
}

async function sourceWorkflow(input: BuildTestWorkflowInput): Promise<WorkflowFile | Uint8Array> {
  const manifest = input.manifest;
  if (manifest === undefined) {
    if (input.workflow === undefined) throw missing(input.test);
    return input.workflow.bytes;
  }
  if (manifest['includes'] !== undefined) {
    const built = await buildWorkflows(manifest, { workflowDirs: [input.includeDir] });
    return built.workflow;
  }
  if (input.workflow === undefined) throw missing(input.test);
  const single = {
    includes: [{ sourceWorkflow: input.workflow.name, customizations: manifest['customizations'] }],
  };
  const built = await buildWorkflows(single, { workflowDirs: [input.workflow.dir] });
  return built.workflow;
}

function missing(test: string): TestRunnerError {
  return new TestRunnerError(
    'TESTRUNNER_TEST_INVALID',
    `${test}: no workflow to test (useThisTestConfigFile)`,
  );
}

function wrap(test: string, err: unknown): TestRunnerError {
  const e = err as { message?: unknown };
  return new TestRunnerError(
    'TESTRUNNER_WORKFLOW_INVALID',
    `${test}: the workflow under test cannot be built: ${String(e.message)}`,
    { cause: err, details: compilerDetails(err) },
  );
}
