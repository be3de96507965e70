import { parseStrictJson } from '@org/strict-json';

// Where a `body` part spells a number as no integer is written: with a fraction (`7.0`), an exponent (`1e3`) or
// as minus zero. The strict parser gives the number only (`1e3` is 1000, `7.0000000000000001` is 7), so an
// `integer` schema member would take such a spelling as the integer it rounds to, and the packager would sign
// that. Every number of a request body is an integer member, so each of these spellings is refused, by pointer.

const SPACE = new Set([0x20, 0x09, 0x0a, 0x0d]);

/** `/`-joined RFC 6901 reference token. */
const token = (name: string) => name.replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * The JSON pointers of the numbers of `text` spelt with a fraction, an exponent or as minus zero, in document order.
 * `text` must be JSON that parseStrictJson accepted (bounded depth and size; nothing is re-checked here). Member
 * names are decoded to make the pointers; no string value is copied (a body holds key text, ADR 0112).
 */
export function nonIntegerSpellings(text: string): string[] {
  const found: string[] = [];
  let i = 0;
  const skipSpace = () => {
    while (SPACE.has(text.charCodeAt(i))) i++;
  };
  /** Moves past the string at `i` (to after its closing quote). */
  const skipString = () => {
    i++;
    for (let c = text.charCodeAt(i); c !== 0x22; c = text.charCodeAt(i)) i += c === 0x5c ? 2 : 1;
    i++;
  };
  const value = (pointer: string): void => {
    skipSpace();
    const c = text.charCodeAt(i);
    if (c === 0x7b || c === 0x5b) {
      const close = c === 0x7b ? 0x7d : 0x5d;
      i++;
      skipSpace();
      if (text.charCodeAt(i) === close) {
        i++;
        return;
      }
      for (let n = 0; ; n++) {
        let at = `${pointer}/${n}`;
        if (c === 0x7b) {
          skipSpace();
          const start = i;
          skipString();
          const name = text.slice(start, i);
          // A member name, never a secret; already accepted by the strict parser (at most 3 UTF-8 bytes a unit).
          at = `${pointer}/${token(parseStrictJson(name, { maxBytes: 3 * name.length }) as string)}`;
          skipSpace();
          i++; // the colon
        }
        value(at);
        skipSpace();
        if (text.charCodeAt(i++) === close) return; // else the comma
      }
    }
    if (c === 0x22) return skipString();
    if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      const start = i;
      let integer = true;
      for (let d = text.charCodeAt(++i); ; d = text.charCodeAt(++i)) {
        if (d === 0x2e || d === 0x65 || d === 0x45) integer = false;
        else if (!(d === 0x2b || d === 0x2d || (d >= 0x30 && d <= 0x39))) break;
      }
      if (!integer || /^-0+$/.test(text.slice(start, i))) found.push(pointer);
      return;
    }
    while (text.charCodeAt(i) >= 0x61 && text.charCodeAt(i) <= 0x7a) i++; // true, false, null
  };
  value('');
  return found;
}
