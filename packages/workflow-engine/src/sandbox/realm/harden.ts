/**
 * Hardening of a reused sandbox realm (ADR 0042), called once by the realm prelude (`prelude.ts`) when the realm
 * is created, after the prelude has captured what it needs from the global object.
 *
 * - `FinalizationRegistry` is removed: its callbacks are the one way code of an ended run could run later.
 *   `SharedArrayBuffer` is removed: growing one reaches memory outside it in this QuickJS build.
 * - A few data properties of prototypes that scripts commonly shadow by assignment (`obj.toString = …`,
 *   `err.name = …`) become getter/setter pairs whose setter defines an own property on the assigned object, so
 *   freezing the prototype does not make such assignments fail (the "override mistake").
 * - Every object reachable from the global object, and the intrinsics reachable only through syntax
 *   (generator, async and iterator prototypes, %TypedArray%, %ThrowTypeError%), is frozen.
 * - The global object's own properties become non-writable and non-configurable; the global object itself stays
 *   extensible so that sloppy scripts may still create implicit globals.
 *
 * Returns `audit()`: after a run it deletes every global the run added and returns false — the engine then
 * discards the realm — when one cannot be deleted or the global object lost its extensibility or prototype.
 */
import type { RealmGlobals } from './types.js';

/** The iterator-helper constructor, where this QuickJS has it (not in this package's `lib`). */
declare const Iterator:
  | ((abstract new () => object) & {
      from?: (it: { next(): IteratorResult<unknown> }) => object;
      concat?: () => object;
    })
  | undefined;

export function hardenRealm(): () => boolean {
  const G = globalThis as typeof globalThis & RealmGlobals;
  const protoOf = Object.getPrototypeOf,
    gopd = Object.getOwnPropertyDescriptor,
    defProp = Object.defineProperty;
  const freezeObj = Object.freeze,
    isExtensible = Object.isExtensible,
    ownKeys = Reflect.ownKeys;
  const deleteProp = Reflect.deleteProperty,
    ownProp = Object.prototype.hasOwnProperty,
    applyFn = Reflect.apply;
  const TypeErr = TypeError;
  delete (G as RealmGlobals).FinalizationRegistry;
  // This QuickJS build lets a growable SharedArrayBuffer's view reach past its allocation into the wasm heap
  // (grow() sets the length without allocating when no SAB allocator hooks are set). Nothing here needs it.
  delete (G as RealmGlobals).SharedArrayBuffer;
  const OVERRIDABLE = [
    'constructor',
    'toString',
    'valueOf',
    'toLocaleString',
    'toJSON',
    'name',
    'message',
    'hasOwnProperty',
    'isPrototypeOf',
    'propertyIsEnumerable',
  ];
  function enableOverride(obj: object, key: string): void {
    const d = gopd(obj, key);
    if (!d || !('value' in d) || !d.configurable) return;
    const value: unknown = d.value;
    // Accessor methods have no .prototype object (a function expression would, and it would need the same).
    const pair = gopd(
      {
        get x() {
          return value;
        },
        set x(v: unknown) {
          // `this` is whatever the assignment was made on: the prototype itself, an object inheriting from it, or
          // (a primitive's own property assignment in strict code) nothing.
          const self = this as unknown as Record<string, unknown> | null | undefined;
          if (self === obj || self === null || self === undefined)
            throw new TypeErr('Cannot assign to read only property ' + String(key));
          if (applyFn(ownProp, self, [key])) self[key] = v;
          else defProp(self, key, { value: v, writable: true, enumerable: true, configurable: true });
        },
      },
      'x',
    )!;
    defProp(obj, key, {
      get: pair.get,
      set: pair.set,
      enumerable: d.enumerable,
      configurable: false,
    });
  }
  const roots: unknown[] = [
    G,
    protoOf(function* () {}),
    protoOf(async function () {}),
    protoOf(async function* () {}),
    protoOf((function* () {})()),
    protoOf((async function* () {})()),
    protoOf([][Symbol.iterator]()),
    protoOf(new Map()[Symbol.iterator]()),
    protoOf(new Set()[Symbol.iterator]()),
    protoOf(''[Symbol.iterator]()),
    protoOf(/x/[Symbol.matchAll]('')),
    protoOf(Int8Array),
    (function () {
      'use strict';
      return gopd(arguments, 'callee')!.get;
    })(),
  ];
  // Iterator helpers (where this QuickJS has them): their prototypes are reachable only through the objects made.
  const values = [][Symbol.iterator]() as unknown as { map?: (f: (x: unknown) => unknown) => object };
  if (typeof values.map === 'function') roots.push(protoOf(values.map((x) => x)));
  if (typeof Iterator === 'function' && typeof Iterator.from === 'function') {
    roots.push(
      protoOf(
        Iterator.from({
          next() {
            return { done: true, value: undefined };
          },
        }),
      ),
    );
    if (typeof Iterator.concat === 'function') roots.push(protoOf(Iterator.concat()));
  }
  const seen = new Set<unknown>();
  const pending = roots.slice();
  while (pending.length > 0) {
    const o = pending.pop();
    if (o === null || (typeof o !== 'object' && typeof o !== 'function') || seen.has(o)) continue;
    seen.add(o);
    if (typeof o === 'object' && o !== G) {
      for (const k of OVERRIDABLE) {
        // The original value stays reachable through the new getter: it must be frozen too.
        const d = gopd(o, k);
        if (d && 'value' in d) pending.push(d.value);
        enableOverride(o, k);
      }
    }
    if (o !== G) freezeObj(o);
    pending.push(protoOf(o));
    for (const k of ownKeys(o)) {
      const d = gopd(o, k);
      if (!d) continue;
      if ('value' in d) pending.push(d.value);
      else pending.push(d.get, d.set);
    }
  }
  for (const k of ownKeys(G)) {
    const d = gopd(G, k);
    if (d && d.configurable)
      defProp(G, k, 'value' in d ? { writable: false, configurable: false } : { configurable: false });
    else if (d && d.writable) defProp(G, k, { writable: false });
  }
  const baseline = new Set(ownKeys(G)),
    globalProto: unknown = protoOf(G);
  function audit(): boolean {
    if (!isExtensible(G) || protoOf(G) !== globalProto) return false;
    for (const k of ownKeys(G)) if (!baseline.has(k) && !deleteProp(G, k)) return false;
    return true;
  }
  return audit;
}
