import { execFileSync } from 'node:child_process';
import { beforeAll, describe, expect, it } from 'vitest';
import { commandsOf, oapp, tempDir } from './helpers.js';

const dir = tempDir();
const hasGroff = (() => {
  try {
    execFileSync('groff', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

let page = '';
let commands: string[] = [];
let keygenHelp = '';

beforeAll(async () => {
  const man = await oapp(['man'], { cwd: dir });
  expect(man.code).toBe(0);
  expect(man.stderr).toBe('');
  page = man.out;
  commands = commandsOf((await oapp(['--help'], { cwd: dir })).out);
  keygenHelp = (await oapp(['keygen', '--help'], { cwd: dir })).out;
});

/** A name as it appears in roff source (hyphens are `\-`). */
const roff = (text: string) => text.replace(/-/g, '\\-');

describe('manPage', () => {
  it('is a man(7) page: it starts with .TH OAPP 1 and has NAME and SYNOPSIS sections', () => {
    expect(page).toMatch(/^(\.\\".*\n)*\.TH OAPP 1 /);
    expect(page).toContain('\n.SH NAME\noapp \\- ');
    expect(page).toContain('\n.SH SYNOPSIS\n');
    expect(page).toMatch(/^[\x20-\x7e\n]*$/); // plain ASCII: readable without preconv
  });

  it('names every command of oapp --help, each with its own section', () => {
    expect(commands.length).toBeGreaterThan(10);
    for (const c of commands) expect(page, c).toContain(`\n.SS "oapp ${roff(c)}"\n`);
  });

  it("carries a command's help text: its options and its example", () => {
    expect(page).toContain('.B "\\-\\-public\\-out <file>"');
    const example = keygenHelp.split('\n').find((l) => l.includes('oapp keygen --purpose sign'));
    expect(example).toBeDefined();
    expect(page).toContain(roff(example!));
  });

  it.skipIf(!hasGroff)('groff renders it without a warning', () => {
    const text = execFileSync('groff', ['-man', '-Tascii', '-ww'], { input: page, encoding: 'utf8' });
    expect(text).toMatch(/^OAPP\(1\)/m);
    expect(text).toContain('oapp keygen --purpose sign -o author.key');
  });
});
