/**
 * Sandbox-side `bytes().gzip`, `gunzip`, `zip` and `unzip` (SPEC.md §7.1.1–7.1.2). The work is done by the worker
 * thread outside QuickJS (`sandbox/local-ops.ts`, ADR 0075); these wrappers only shape arguments and results.
 * Made per run by `extras.ts`.
 */
import { integerArg, notA, textArg } from './args.js';
import type { UtilEnv } from './types.js';
import { toBytes } from './util.js';

/** An entry as `unzip` returns it and `zip` takes it. */
export interface ZipEntryValue {
  name: string;
  bytes: Uint8Array;
}

/** The bytes of `b` as one ArrayBuffer to hand to the host: the buffer itself when the view covers it whole. */
export function wholeBuffer(b: unknown, what: string): ArrayBuffer {
  const u = toBytes(b, what);
  return u.byteOffset === 0 && u.byteLength === u.buffer.byteLength
    ? (u.buffer as ArrayBuffer)
    : u.slice().buffer;
}

/** `[name, bytes]` pairs from an array of `{ name, bytes }` or an object of name → bytes. */
function entryList(entries: unknown): [string, Uint8Array][] {
  const out: [string, Uint8Array][] = [];
  if (Array.isArray(entries)) {
    (entries as unknown[]).forEach((e, i) => {
      if (e === null || typeof e !== 'object') throw notA('zip: entries[' + i + ']', '{ name, bytes }', e);
      const { name, bytes } = e as { name?: unknown; bytes?: unknown };
      out.push([
        textArg(name, 'zip: entries[' + i + '].name'),
        toBytes(bytes, 'zip: entries[' + i + '].bytes'),
      ]);
    });
  } else if (entries !== null && typeof entries === 'object') {
    const o = entries as Record<string, unknown>;
    for (const k of Object.keys(o)) out.push([k, toBytes(o[k], 'zip: entries.' + k)]);
  } else throw notA('zip: entries', 'an array of { name, bytes } or an object of name → bytes', entries);
  return out;
}

/**
 * An optional integer argument whose range the host checks (`compress.ts`): here only its type, which JSON would
 * lose (NaN becomes null, the default).
 */
function optionalInteger(v: unknown, what: string): number | null {
  return v === undefined || v === null ? null : integerArg(v, what);
}

export function createCompression(env: UtilEnv) {
  return {
    gzip(b: unknown, level?: unknown) {
      const l = optionalInteger(level, 'gzip: level');
      return new Uint8Array(env.call('bytes.gzip', [l], wholeBuffer(b, 'gzip: b')) as ArrayBuffer);
    },
    gunzip(b: unknown, maxBytes?: unknown) {
      const max = optionalInteger(maxBytes, 'gunzip: maxBytes');
      return new Uint8Array(env.call('bytes.gunzip', [max], wholeBuffer(b, 'gunzip: b')) as ArrayBuffer);
    },
    zip(entries: unknown) {
      const list = entryList(entries);
      let n = 0;
      for (const [, b] of list) n += b.length;
      const all = new Uint8Array(n);
      n = 0;
      for (const [, b] of list) {
        all.set(b, n);
        n += b.length;
      }
      const spec = list.map(([name, b]) => [name, b.length]);
      return new Uint8Array(env.call('bytes.zip', [spec], all.buffer) as ArrayBuffer);
    },
    unzip(b: unknown, maxBytes?: unknown): ZipEntryValue[] {
      const max = optionalInteger(maxBytes, 'unzip: maxBytes');
      const found = env.call('bytes.unzip', [max], wholeBuffer(b, 'unzip: b')) as {
        name: string;
        data: ArrayBuffer;
      }[];
      return found.map((e) => ({ name: e.name, bytes: new Uint8Array(e.data) }));
    },
  };
}
