import { canonicalCompiled } from './hash-workflow.js';
import { WorkflowError } from './errors.js';
import type { CompiledWorkflow } from './types.js';
import { validateWorkflow } from './validate-workflow.js';

/**
 * Reads the content of an app package (SPEC.md §5.1, ADR 0085): it MUST be the UTF-8 bytes of the RFC 8785 (JCS)
 * form of a compiled workflow, which is what `/workflow-package` and `oapp package` write. So the content's
 * SHA-256, which the package signers signed, is the workflow hash. The checks run in this order: strict JSON and
 * the workflow schema, compiled (no `resource`, no structural `comment`), then byte equality with the JCS text.
 *
 * @param content - the verified plaintext of an app package.
 * @returns the workflow, as {@link validateWorkflow} returns it.
 * @throws WorkflowError `WORKFLOW_JSON_*`, `WORKFLOW_SCHEMA_INVALID`, `WORKFLOW_DUPLICATE_STEP_ID` (not a workflow);
 *   `WORKFLOW_NOT_COMPILED` (an uncompiled workflow); `WORKFLOW_NOT_CANONICAL` (a compiled workflow in any other
 *   byte form: whitespace, member order, escapes, number spelling).
 */
export function readPackagedWorkflow(content: Uint8Array): CompiledWorkflow {
  const workflow = validateWorkflow(content);
  const canonical = Buffer.from(canonicalCompiled(workflow), 'utf8');
  if (!canonical.equals(content)) {
    const at = firstDifference(canonical, content);
    throw new WorkflowError(
      'WORKFLOW_NOT_CANONICAL',
      `the packaged workflow is not in its canonical (RFC 8785) form: it differs from it at byte ${at}; package the output of the compiler as written by /workflow-package or oapp package`,
      { details: { errors: [{ pointer: '', detail: `differs from the canonical form at byte ${at}` }] } },
    );
  }
  return workflow;
}

function firstDifference(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return i;
  return n;
}
