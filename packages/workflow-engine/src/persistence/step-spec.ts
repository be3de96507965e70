import { EngineError } from '../errors.js';
import type { PersistenceSpec } from './types.js';

type Obj = Record<string, unknown>;

function invalid(message: string): EngineError {
  return new EngineError('ENGINE_INVALID_WORKFLOW', message);
}

/** stringBoolean (docs/interfaces.md §3): true/false or their strings; anything else → the fallback. */
function flag(v: unknown, fallback: boolean): boolean {
  if (typeof v === 'boolean') return v;
  if (typeof v === 'string' && /^(true|false)$/i.test(v)) return v.toLowerCase() === 'true';
  return fallback;
}

/**
 * A step's persistence settings (docs/interfaces.md §4.2), or undefined when it has none. `persistence` wins over
 * `persistenceFile`; `persistence.saveRatio` is accepted and ignored (README.md).
 * @throws EngineError `ENGINE_INVALID_WORKFLOW` for a wrong type.
 */
export function persistenceSpecOf(step: Obj, where: string): PersistenceSpec | undefined {
  const rich = step['persistence'];
  const flush = flag(step['persistenceFileFlush'], true);
  if (rich !== undefined) {
    if (typeof rich !== 'object' || rich === null || Array.isArray(rich))
      throw invalid(`${where}: persistence must be an object`);
    const p = rich as Obj;
    const file = p['persistenceFile'];
    const key = p['hexSymmetricKey'];
    if (typeof file !== 'string' || file === '')
      throw invalid(`${where}: persistence.persistenceFile must be a non-empty string`);
    if (key !== undefined && typeof key !== 'string')
      throw invalid(`${where}: persistence.hexSymmetricKey must be a string`);
    return { file, flush, hexSymmetricKey: key, obfuscate: flag(p['obfuscate'], false) };
  }
  const file = step['persistenceFile'];
  if (file === undefined) return undefined;
  if (typeof file !== 'string' || file === '')
    throw invalid(`${where}: persistenceFile must be a non-empty string`);
  return { file, flush, hexSymmetricKey: undefined, obfuscate: false };
}
