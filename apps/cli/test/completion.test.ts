import { execFile, execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { commandsOf, oapp, tempDir } from './helpers.js';

const dir = tempDir();
const has = (shell: string) => {
  try {
    execFileSync(shell, ['-c', 'exit 0'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};

/** Runs `bash` with `script` on stdin; resolves with its stdout. */
function bash(args: string[], script: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const p = execFile('bash', args, (err, stdout, stderr) =>
      resolve({ code: err === null ? 0 : Number(err.code), stdout, stderr }),
    );
    p.stdin!.end(script);
  });
}

let commands: string[] = [];
const scripts: Record<string, string> = {};

beforeAll(async () => {
  const help = await oapp(['--help'], { cwd: dir });
  commands = commandsOf(help.out);
  for (const shell of ['bash', 'zsh', 'fish']) {
    const r = await oapp(['completion', shell], { cwd: dir });
    expect(r.code, shell).toBe(0);
    expect(r.stderr).toBe('');
    scripts[shell] = r.out;
  }
});

describe('completionScript', () => {
  it('the help lists every command, the new ones too', () => {
    expect(commands).toEqual(
      expect.arrayContaining([
        'keygen',
        'test',
        'version',
        'completion',
        'man',
        'help',
        'sign-bootstrap',
        'verify-bootstrap',
      ]),
    );
    expect(commands).toHaveLength(19);
  });

  // How each script names a command: a case arm (bash), a _describe entry (zsh), a subcommand candidate (fish).
  const named: Record<string, (c: string) => RegExp> = {
    bash: (c) => new RegExp(`^ {4}${c}\\)$`, 'm'),
    zsh: (c) => new RegExp(`^ {4}'${c}:`, 'm'),
    fish: (c) => new RegExp(`^complete -c oapp -n __fish_use_subcommand -a '${c}' -d `, 'm'),
  };

  it.each(Object.keys(named))('the %s script names every command of oapp --help', (shell) => {
    for (const c of commands) expect(scripts[shell], `${shell}: ${c}`).toMatch(named[shell]!(c));
  });

  it('bash parses the bash script (bash -n)', async () => {
    const r = await bash(['-n'], scripts['bash']!);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
  });

  it('the bash script completes commands, options, choices and help topics', async () => {
    const probe = [
      scripts['bash'],
      't() { COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMPREPLY=(); _oapp; echo "${COMPREPLY[*]}"; }',
      't oapp ke',
      't oapp keygen --pu',
      't oapp keygen --purpose a',
      't oapp completion ""',
      't oapp help ver',
      't oapp man --',
      't oapp verify-bootstrap --ad',
      't oapp package --format-version ""',
    ].join('\n');
    const r = await bash([], probe);
    expect(r.stderr).toBe('');
    expect(r.stdout.split('\n')).toEqual([
      'keygen',
      '--purpose --public-out',
      'authenticated anonymous',
      'bash zsh fish',
      'verify verify-bootstrap version',
      '--help',
      '--admin-key',
      '1 2',
      '',
    ]);
  });

  it.skipIf(!has('zsh'))('zsh parses the zsh script (zsh -n)', () => {
    expect(() => execFileSync('zsh', ['-n'], { input: scripts['zsh'], stdio: 'pipe' })).not.toThrow();
  });

  it.skipIf(!has('fish'))('fish parses the fish script (fish --no-execute)', () => {
    // From a file: fish does not read a script from the socket node gives a child as stdin.
    const file = join(dir, 'oapp.fish');
    writeFileSync(file, scripts['fish']!);
    expect(() => execFileSync('fish', ['--no-execute', file], { stdio: 'pipe' })).not.toThrow();
  });

  it('an unknown shell is a usage error (exit 2, CLI_USAGE)', async () => {
    const r = await oapp(['completion', 'ksh'], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^oapp: CLI_USAGE: .*'ksh' is invalid.*bash, zsh, fish.*\n$/);
    expect(r.out).toBe('');
  });
});
