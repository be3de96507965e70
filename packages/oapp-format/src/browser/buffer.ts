// The one `Buffer` call of this library and of @org/strict-json (bundled in), for the browser build (ADR 0146;
// tsup.browser.config.ts injects it where the code names `Buffer`): the UTF-8 byte length of a string. Like
// Node's, it counts a lone surrogate as the three bytes of U+FFFD.
export const Buffer = {
  byteLength(text: string, encoding: 'utf8' | 'utf-8' = 'utf8'): number {
    if (encoding !== 'utf8' && encoding !== 'utf-8') throw new TypeError(`Buffer.byteLength: ${String(encoding)}`);
    return new TextEncoder().encode(text).length;
  },
};
