import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** A coded error as every package in this repo throws it. */
export interface CodedError {
  name: string;
  code: string;
}

/** Duck-typed check for a package error with a code (never `instanceof` across packages). */
export function isCodedError(err: unknown, name?: string, code?: string): err is CodedError {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as Record<string, unknown>;
  if (typeof e['name'] !== 'string' || typeof e['code'] !== 'string') return false;
  return (name === undefined || e['name'] === name) && (code === undefined || e['code'] === code);
}

/** Result of running `fn` and classifying what it threw. */
export function thrownBy(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  return undefined;
}

/** Splits bytes into 1-byte views (for feeding a streaming parser byte by byte). */
export function* byteByByte(bytes: Uint8Array): Generator<Uint8Array> {
  for (let i = 0; i < bytes.length; i++) yield bytes.subarray(i, i + 1);
}

/** Splits bytes into chunks of `size` bytes. */
export function* chunked(bytes: Uint8Array, size: number): Generator<Uint8Array> {
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, Math.min(bytes.length, i + size));
}

/** An async iterable over the given chunks (stand-in for a file stream). */
export async function* asAsync(chunks: Iterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  for (const c of chunks) yield await Promise.resolve(c);
}

/** A copy of `bytes` placed at a non-zero offset inside a larger buffer (docs/security-requirements.md S118). */
export function offsetView(bytes: Uint8Array, offset = 7): Uint8Array {
  const big = new Uint8Array(bytes.length + offset + 5).fill(0xa5);
  big.set(bytes, offset);
  return big.subarray(offset, offset + bytes.length);
}

/** One file of a named negative corpus: `<CODE>--<defect>.<ext>`. */
export interface NegativeVector {
  file: string;
  code: string;
  defect: string;
  bytes: Uint8Array;
}

/** Reads `dir` and returns every `<CODE>--<defect>.<ext>` file, sorted by name. */
export function loadNegativeCorpus(dir: string): NegativeVector[] {
  return readdirSync(dir)
    .filter((f) => /^[A-Z0-9_]+--[a-z0-9-]+\.[a-z0-9.]+$/.test(f))
    .sort()
    .map((file) => {
      const [code = '', rest = ''] = file.split('--');
      return {
        file,
        code,
        defect: rest.replace(/\..*$/, ''),
        bytes: new Uint8Array(readFileSync(join(dir, file))),
      };
    });
}

/** Lowercase hex of bytes (tests only; production code uses the strict codecs). */
export function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}

/** Bytes of a hex string (tests only). */
export function unhex(s: string): Uint8Array {
  return new Uint8Array(Buffer.from(s, 'hex'));
}

/**
 * Names every plain object inherits from `Object.prototype`. A lookup keyed by a request value must treat each
 * as unknown (a Map, `Object.hasOwn` or a null-prototype object), never find an inherited function or setter.
 */
export const PROTOTYPE_NAMES = [
  '__proto__',
  'constructor',
  'toString',
  'valueOf',
  'hasOwnProperty',
  'isPrototypeOf',
  'propertyIsEnumerable',
  'toLocaleString',
  '__defineGetter__',
  '__lookupGetter__',
] as const;

/**
 * Why `err.details` breaks the one shape every package's error uses, or undefined when it keeps it: `details` is
 * absent or a plain object (never an array, never a class instance), and a list of failed fields, when there is
 * one, is `details.errors`, an array of `{ pointer, detail }` strings (docs/engineering.md, "Errors").
 */
export function detailsShapeProblem(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null) return 'not an object';
  const details = (err as { details?: unknown }).details;
  if (details === undefined) return undefined;
  if (typeof details !== 'object' || details === null)
    return `details is ${details === null ? 'null' : typeof details}`;
  if (Array.isArray(details)) return 'details is an array';
  const proto: unknown = Object.getPrototypeOf(details);
  if (proto !== Object.prototype && proto !== null) return 'details is not a plain object';
  const errors = (details as { errors?: unknown }).errors;
  if (errors === undefined) return undefined;
  if (!Array.isArray(errors)) return 'details.errors is not an array';
  const bad = (errors as unknown[]).findIndex(
    (e) =>
      typeof e !== 'object' ||
      e === null ||
      typeof (e as { pointer?: unknown }).pointer !== 'string' ||
      typeof (e as { detail?: unknown }).detail !== 'string',
  );
  return bad === -1 ? undefined : `details.errors[${bad}] is not { pointer, detail }`;
}

export { answerHeaders, parseFinalResponse, RawClient, wholeAnswer, type RawResponse } from './raw-client.js';
export { multipartForm, sampleWorkflow, writeSampleResources } from './packager-fixtures.js';
export { writeAjvProbe, writeWorkersProbe } from './probes.js';
