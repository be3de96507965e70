import { createHash } from 'node:crypto';
import { canonicalizeChecked, canonicalizeInto } from './canonical-json.js';
import { WorkflowError } from './errors.js';
import { forEachProcessor } from './internal/walk.js';
import { hasKey, isJsonObject, toPointer } from './json-value.js';
import type { CompiledWorkflow } from './types.js';

/** Version string of the hash construction in SPEC.md §5; bump it for any change to the hashed bytes. */
export const WORKFLOW_HASH_SPEC = 'workflow-hash/v1';

/** Name of the digest algorithm used by {@link hashWorkflow}. */
export const WORKFLOW_HASH_ALGORITHM = 'sha-256';

/**
 * The workflow hash (SPEC.md §5): SHA-256 over the UTF-8 bytes of the RFC 8785 canonical JSON of a compiled
 * workflow, as 64 lowercase hex characters. Key order and whitespace of the source do not matter; every
 * behaviour-relevant byte (inlined resource content included) does. This is the value `/workflow-package` signs.
 *
 * @param compiled - the `workflow` returned by `compileWorkflow`.
 * @throws WorkflowError `WORKFLOW_NOT_COMPILED` when comments or unresolved `resource` references remain;
 *   `WORKFLOW_VALUE_INVALID` / `WORKFLOW_JSON_TOO_DEEP` when the value has no canonical JSON form.
 */
export function hashWorkflow(compiled: CompiledWorkflow): string {
  assertNoResources(compiled);
  // The canonical text goes to the hash in pieces (SPEC.md §5 steps 1–3 in one pass): the same bytes as
  // hashing canonicalCompiled(compiled), without holding all of it.
  const hash = createHash('sha256');
  canonicalizeInto(compiled, 'comment', hash);
  return hash.digest('hex');
}

/**
 * The JCS text of a compiled workflow (SPEC.md §5 steps 1–2).
 * @throws WorkflowError as {@link hashWorkflow}.
 * @internal
 */
export function canonicalCompiled(compiled: unknown): string {
  assertNoResources(compiled);
  // One pass both canonicalises and refuses structural `comment` members (SPEC.md §5 step 1).
  return canonicalizeChecked(compiled, 'comment');
}

function assertNoResources(v: unknown): void {
  if (!isJsonObject(v)) throw notCompiled('', 'a compiled workflow is an object');
  forEachProcessor(v, (p, at) => {
    if (hasKey(p, 'resource'))
      throw notCompiled(toPointer([...at(), 'resource']), 'resource was not inlined');
  });
}

function notCompiled(pointer: string, detail: string): WorkflowError {
  return new WorkflowError('WORKFLOW_NOT_COMPILED', `not a compiled workflow: ${detail}; compile it first`, {
    details: { errors: [{ pointer, detail }] },
  });
}
