import { inspectPackage } from '@org/oapp-format';
import { canonicalize, hashWorkflow, parseStrictJson } from '@org/workflow-compiler';
import { Command } from 'commander';
import { collect, type Context } from '../context.js';
import { asUsage, CliError } from '../errors.js';
import { memoryInput, packageInput, readInput, writePackage, type Input } from '../io.js';
import { checkOutputs } from '../output-paths.js';
import { addReleaseOptions, releaseOptionsOf, type ReleaseOptionValues } from '../release.js';
import {
  addSealOptions,
  KEY_SOURCE_HELP,
  loadSealKeys,
  refuseJsonWithStdout,
  type SealFlags,
} from './shared.js';
import { compileFile, dirsFor } from './workflows.js';

interface PackageOptions extends SealFlags, ReleaseOptionValues {
  output: string;
  packageId: string;
  license?: string;
  resourceDir?: string[];
  raw?: boolean;
  json?: boolean;
}

async function licenseOf(path: string | undefined): Promise<Record<string, unknown> | undefined> {
  if (path === undefined) return undefined;
  const bytes = await readInput(path, 1024 * 1024);
  const value = await asUsage(`--license ${path}`, () => parseStrictJson(bytes));
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new CliError('CLI_USAGE', `--license ${path}: must hold a JSON object`);
  return value;
}

/** The release of the package written to `path` (`--json` writes to a file), as its HEADER says (raw values). */
async function releaseSummary(path: string) {
  const written = await packageInput(path);
  try {
    const { formatVersion, sequence, createdAt, expiresAt } = await inspectPackage(written.open());
    return { formatVersion, sequence, createdAt, expiresAt };
  } finally {
    await written.dispose();
  }
}

/** `oapp package`: like POST /workflow-package. */
export function packageCommand(ctx: Context, done: (code: number) => void): Command {
  const cmd = new Command('package')
    .description(
      'compile a workflow, sign it and encrypt it into an .oapp package (like POST /workflow-package)',
    )
    .argument('<workflow>', 'workflow JSON file (with --raw: any file), or - for stdin')
    .requiredOption('-o, --output <file>', 'the .oapp file to write (- for stdout)')
    .requiredOption('--package-id <id>', "must equal the receiving bootstrap's packaging.packageId");
  addSealOptions(cmd, true)
    .option('--license <file>', 'JSON object embedded in the package and covered by every signature')
    .option(
      '--resource-dir <dir>',
      "resource directory; repeatable (default: the workflow's directory)",
      collect,
    )
    .option(
      '--raw',
      'package the input bytes as they are, streamed (no compile step, no workflow hash): large content',
    );
  addReleaseOptions(cmd, 'package', true)
    .option('--json', 'print a JSON summary')
    .addHelpText(
      'after',
      `\n${KEY_SOURCE_HELP}\n\nExamples:\n  oapp package workflow.json -o hello.oapp --package-id hello-app --packager-key packager.key \\\n` +
        '    --recipient deployment.pub --signer author.key --sign-text "release 1"\n' +
        '  oapp package workflow.json -o hello.oapp --package-id hello-app --packager-key packager.key \\\n' +
        '    --recipient deployment.pub --signer author.key --sign-text "release 2" --sequence 2 --expires-in 90d',
    )
    .action(async (workflow: string, o: PackageOptions) => {
      refuseJsonWithStdout(o.json, o.output);
      checkOutputs([{ path: o.output, flag: '-o' }]);
      const release = releaseOptionsOf(o);
      const keys = await loadSealKeys(ctx, o);
      const license = await licenseOf(o.license);
      if (o.raw === true && o.resourceDir !== undefined)
        throw new CliError('CLI_USAGE', '--resource-dir has no effect with --raw');
      let content: Input;
      let workflowHash: string | undefined;
      let plain: Buffer | undefined;
      if (o.raw === true) {
        // Streamed from the file (standard input is spooled to a private temporary file first).
        content = await packageInput(workflow);
      } else {
        const { workflow: compiled } = await compileFile(workflow, dirsFor(o.resourceDir, workflow));
        // The content is the JCS form of the compiled workflow: its SHA-256 is the workflow hash.
        plain = Buffer.from(canonicalize(compiled), 'utf8');
        workflowHash = hashWorkflow(compiled);
        content = memoryInput(workflow, plain);
      }
      try {
        const bytes = await writePackage(
          o.output,
          {
            packageId: o.packageId,
            packagerSecretKey: keys.packagerSecretKey,
            recipients: keys.recipients,
            signers: keys.signers,
            license,
            ...release,
          },
          content,
        );
        if (o.json === true) {
          ctx.printJson({
            ok: true,
            output: o.output,
            bytes,
            packageId: o.packageId,
            ...(workflowHash === undefined ? {} : { workflowHash }),
            recipients: keys.recipients.length,
            signatures: keys.signers.length,
            ...(await releaseSummary(o.output)),
          });
        }
      } finally {
        plain?.fill(0);
        await content.dispose();
      }
      done(0);
    });
  return cmd;
}
