import { canonicalize } from './canonical-json.js';
import { WorkflowError } from './errors.js';
import { forEachProcessor, stripComments } from './internal/walk.js';
import type { JsonObject } from './json-value.js';
import { MAX_JSON_BYTES } from './strict-json.js';
import {
  DEFAULT_RESOURCE_DIRS,
  MAX_RESOURCE_BYTES,
  prepareRoots,
  resolveFile,
  type ResolvedFile,
  type RootDir,
} from './resource-resolver.js';
import { parseResourcePath } from './resource-path.js';
import type { CompiledWorkflow } from './types.js';
import { validateWorkflow } from './validate-workflow.js';

/** Default cap for a compiled workflow: input bytes plus every inlined copy of a resource (16 MiB). */
export const MAX_COMPILED_BYTES = 16 * 1024 * 1024;

/** Options of {@link compileWorkflow}. */
export interface CompileWorkflowOptions {
  /** Resource directories, searched in order; the first that holds a file wins. Default {@link DEFAULT_RESOURCE_DIRS}. */
  resourceDirs?: readonly string[];
  /** Cap on the workflow input in bytes. Default 8 MiB. */
  maxInputBytes?: number;
  /** Cap on one resource file in bytes. Default {@link MAX_RESOURCE_BYTES}. */
  maxResourceBytes?: number;
  /** Cap on the compiled result (input bytes + every inlined resource copy). Default {@link MAX_COMPILED_BYTES}. */
  maxCompiledBytes?: number;
}

/** Where one inlined resource came from. */
export interface CompiledResource {
  /** Canonical resource path (`/a/b.js`). */
  path: string;
  /** The configured resource directory that held it. */
  dir: string;
  /** Size of the file in bytes. */
  bytes: number;
  /** How many processors reference it. */
  references: number;
}

/** Result of {@link compileWorkflow}. */
export interface CompileWorkflowResult {
  /** The compiled workflow: no comments, every resource inlined. Hash it with `hashWorkflow`. */
  workflow: CompiledWorkflow;
  /** Every resource inlined, in order of first reference. */
  resources: CompiledResource[];
}

interface Ref {
  processor: JsonObject;
  path: string;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Compiles a workflow (SPEC.md §4): strict parse, schema validation, comment removal, and resource inlining —
 * each `{ "resource": p }` becomes `{ "script": <file content>, "resourceName": "/p" }`, so the result never reads
 * files at run time. Output keeps the source's member order; the hash does not depend on it.
 *
 * @param input - workflow bytes, JSON text, or a parsed value.
 * @throws WorkflowError every `WORKFLOW_JSON_*` syntax code; `WORKFLOW_VALUE_INVALID`; `WORKFLOW_SCHEMA_INVALID`;
 *   `WORKFLOW_DUPLICATE_STEP_ID`; `WORKFLOW_RESOURCE_PATH_INVALID` (checked for every path before any file is
 *   opened); `WORKFLOW_RESOURCE_OUTSIDE_ROOT`; `WORKFLOW_RESOURCE_NOT_FOUND`; `WORKFLOW_RESOURCE_TOO_LARGE`;
 *   `WORKFLOW_RESOURCE_BAD_UTF8`; `WORKFLOW_COMPILED_TOO_LARGE` — as a rejected promise.
 */
export function compileWorkflow(
  input: unknown,
  options: CompileWorkflowOptions = {},
): Promise<CompileWorkflowResult> {
  // Resource files are read synchronously (ADR 0014); the promise keeps room for asynchronous stores.
  return new Promise((resolve) => resolve(compileNow(input, options)));
}

function compileNow(input: unknown, options: CompileWorkflowOptions): CompileWorkflowResult {
  const source = validateWorkflow(input, {
    maxBytes: options.maxInputBytes ?? MAX_JSON_BYTES,
  }) as unknown as JsonObject;
  const workflow = stripComments(source) as JsonObject;
  const refs = collectRefs(workflow);
  const maxCompiled = options.maxCompiledBytes ?? MAX_COMPILED_BYTES;
  let budget = maxCompiled - inputBytes(input, workflow);
  if (budget < 0) throw compiledTooLarge(maxCompiled);
  if (refs.length === 0) return { workflow: workflow as unknown as CompiledWorkflow, resources: [] };
  // Only a workflow that references files needs the directories (a realpath each).
  const roots = prepareRoots(options.resourceDirs ?? DEFAULT_RESOURCE_DIRS);
  const files = loadAll(refs, roots, options.maxResourceBytes ?? MAX_RESOURCE_BYTES, maxCompiled);
  const resources = new Map<string, CompiledResource>();
  for (const ref of refs) {
    const file = files.get(ref.path) as LoadedText;
    budget -= file.bytes.byteLength;
    if (budget < 0) throw compiledTooLarge(maxCompiled);
    inline(ref.processor, file);
    const seen = resources.get(file.path);
    if (seen) seen.references++;
    else
      resources.set(file.path, {
        path: file.path,
        dir: file.dir,
        bytes: file.bytes.byteLength,
        references: 1,
      });
  }
  return { workflow: workflow as unknown as CompiledWorkflow, resources: [...resources.values()] };
}

/**
 * Every processor with a `resource`, in document order; every path is checked before any I/O (S103). In the same
 * walk, `"resource": ""` is dropped: it counts as absent (validate-workflow.ts), so the compiled form does not
 * carry it.
 */
function collectRefs(workflow: JsonObject): Ref[] {
  const refs: Ref[] = [];
  forEachProcessor(workflow, (processor) => {
    const path = processor['resource'];
    if (path === '') {
      delete processor['resource'];
      return;
    }
    if (typeof path !== 'string') return;
    refs.push({ processor, path: `/${parseResourcePath(path).join('/')}` });
  });
  return refs;
}

function inputBytes(input: unknown, workflow: JsonObject): number {
  if (input instanceof Uint8Array) return input.byteLength;
  if (typeof input === 'string') return Buffer.byteLength(input, 'utf8');
  return Buffer.byteLength(canonicalize(workflow), 'utf8');
}

function inline(processor: JsonObject, file: LoadedText): void {
  delete processor['resource'];
  processor['script'] = file.text;
  processor['resourceName'] = file.path;
}

interface LoadedText extends ResolvedFile {
  text: string;
}

/** Loads each distinct path once, in document order, stopping at the first failure or at the size cap. */
function loadAll(refs: Ref[], roots: RootDir[], maxBytes: number, maxTotal: number): Map<string, LoadedText> {
  const out = new Map<string, LoadedText>();
  let total = 0;
  for (const { path } of refs) {
    if (out.has(path)) continue;
    const file = loadText(path, roots, maxBytes);
    total += file.bytes.byteLength;
    if (total > maxTotal) throw compiledTooLarge(maxTotal);
    out.set(path, file);
  }
  return out;
}

function loadText(path: string, roots: RootDir[], maxBytes: number): LoadedText {
  const file = resolveFile(path, roots, maxBytes);
  try {
    return { ...file, text: utf8.decode(file.bytes) };
  } catch (cause) {
    throw new WorkflowError(
      'WORKFLOW_RESOURCE_BAD_UTF8',
      `resource ${JSON.stringify(file.path)} is not valid UTF-8`,
      {
        cause,
      },
    );
  }
}

function compiledTooLarge(max: number): WorkflowError {
  return new WorkflowError(
    'WORKFLOW_COMPILED_TOO_LARGE',
    `the compiled workflow would be larger than ${max} bytes`,
  );
}
