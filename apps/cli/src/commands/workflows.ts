import { dirname, resolve } from 'node:path';
import {
  buildWorkflows,
  compileWorkflow,
  hashWorkflow,
  MAX_JSON_BYTES,
  WORKFLOW_HASH_ALGORITHM,
} from '@org/workflow-compiler';
import { Command } from 'commander';
import { collect, type Context } from '../context.js';
import { readInput, STDIO, writeOutput } from '../io.js';
import { checkOutputs } from '../output-paths.js';

/** Resource directories: the ones given, else the directory of the input file (the working directory for stdin). */
export function dirsFor(given: readonly string[] | undefined, input: string): string[] {
  if (given !== undefined && given.length > 0) return given.map((d) => resolve(d));
  return [input === STDIO ? process.cwd() : dirname(resolve(input))];
}

/** Reads and compiles a workflow file (or stdin) with the packager's compile step. */
export async function compileFile(path: string, resourceDirs: readonly string[]) {
  const source = await readInput(path, MAX_JSON_BYTES);
  return compileWorkflow(source, { resourceDirs, maxInputBytes: MAX_JSON_BYTES });
}

const pretty = (v: unknown) => `${JSON.stringify(v, null, 2)}\n`;

interface CompileOptions {
  output: string;
  resourceDir?: string[];
  json?: boolean;
}

/** `oapp compile`: like POST /workflow-compile. */
export function compileCommand(_ctx: Context, done: (code: number) => void): Command {
  return new Command('compile')
    .description('validate a workflow, strip comments, inline resources (like POST /workflow-compile)')
    .argument('<workflow>', 'workflow JSON file, or - for stdin')
    .option('-o, --output <file>', 'where the compiled workflow goes', STDIO)
    .option(
      '--resource-dir <dir>',
      "resource directory, searched in order; repeatable (default: the workflow's directory)",
      collect,
    )
    .option('--json', 'write the /workflow-compile response {ok, workflow, resources} instead')
    .addHelpText('after', '\nExample:\n  oapp compile workflow.json -o compiled.json')
    .action(async (workflow: string, o: CompileOptions) => {
      checkOutputs([{ path: o.output, flag: '-o' }]);
      const { workflow: compiled, resources } = await compileFile(workflow, dirsFor(o.resourceDir, workflow));
      const body =
        o.json === true
          ? {
              ok: true,
              workflow: compiled,
              resources: resources.map((r) => ({ path: r.path, bytes: r.bytes, references: r.references })),
            }
          : compiled;
      await writeOutput(o.output, pretty(body));
      done(0);
    });
}

/** `oapp hash`: like POST /workflow-hash. */
export function hashCommand(ctx: Context, done: (code: number) => void): Command {
  return new Command('hash')
    .description('the workflow-hash/v1 of the compiled workflow (like POST /workflow-hash)')
    .argument('<workflow>', 'workflow JSON file, or - for stdin')
    .option(
      '--resource-dir <dir>',
      "resource directory; repeatable (default: the workflow's directory)",
      collect,
    )
    .option('--json', 'print {ok, hash, algorithm}')
    .addHelpText('after', '\nExample:\n  oapp hash workflow.json')
    .action(async (workflow: string, o: { resourceDir?: string[]; json?: boolean }) => {
      const { workflow: compiled } = await compileFile(workflow, dirsFor(o.resourceDir, workflow));
      const hash = hashWorkflow(compiled);
      if (o.json === true) ctx.printJson({ ok: true, hash, algorithm: WORKFLOW_HASH_ALGORITHM });
      else ctx.print(hash);
      done(0);
    });
}

/** `oapp build`: like POST /build-workflows. */
export function buildCommand(_ctx: Context, done: (code: number) => void): Command {
  return new Command('build')
    .description(
      'build one workflow from a manifest of includes and customisations (like POST /build-workflows)',
    )
    .argument('<manifest>', 'manifest JSON file, or - for stdin')
    .option('-o, --output <file>', 'where the built workflow goes', STDIO)
    .option(
      '--workflow-dir <dir>',
      "where sourceWorkflow files are looked up; repeatable (default: the manifest's directory)",
      collect,
    )
    .option('--json', 'write the /build-workflows response {ok, workflow} instead')
    .addHelpText('after', '\nExample:\n  oapp build manifest.json -o workflow.json')
    .action(async (manifest: string, o: { output: string; workflowDir?: string[]; json?: boolean }) => {
      checkOutputs([{ path: o.output, flag: '-o' }]);
      const bytes = await readInput(manifest, MAX_JSON_BYTES);
      const { workflow } = await buildWorkflows(bytes, {
        workflowDirs: dirsFor(o.workflowDir, manifest),
        maxInputBytes: MAX_JSON_BYTES,
      });
      await writeOutput(o.output, pretty(o.json === true ? { ok: true, workflow } : workflow));
      done(0);
    });
}
