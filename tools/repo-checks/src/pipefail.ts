/**
 * Under `set -o pipefail`, a pipeline whose last command stops reading early (`grep -q`, `grep -m N`, `head`) can
 * fail although it found what it looked for: the writer before it gets SIGPIPE, exits 141, and pipefail reports that
 * (issue 27: `podman logs … | grep -q …` failed 14 times in 60). This finds such pipelines in a script's text.
 */

/** A reader that may exit before its input ends. */
const EARLY_READER = /\|\s*(?:grep\s+(?:-[A-Za-z]*[qm]|--quiet|--silent|--max-count)|head\b)/;

/** One pipeline that may fail by SIGPIPE: its 1-based line and text. */
export interface PipefailHazard {
  line: number;
  text: string;
}

/** True when the script turns pipefail on (`set -o pipefail`, `set -euo pipefail`, …). */
export function usesPipefail(script: string): boolean {
  return /^\s*set\s+(?:-[A-Za-z]*o\s+pipefail|-o\s+pipefail|.*\bpipefail\b)/m.test(script);
}

/** The lines of a pipefail script that pipe into an early reader (comments are skipped). */
export function pipefailHazards(script: string): PipefailHazard[] {
  if (!usesPipefail(script)) return [];
  const out: PipefailHazard[] = [];
  script.split('\n').forEach((text, i) => {
    const code = text.replace(/(^|\s)#.*$/, '');
    if (EARLY_READER.test(code)) out.push({ line: i + 1, text: text.trim() });
  });
  return out;
}
