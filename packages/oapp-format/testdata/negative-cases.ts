// The named negative corpus: one function per file, one defect per file. The file name is
// `<CODE>--<defect>.oapp`; test/vectors.test.ts opens each with the vectors.json policy and keys and
// requires exactly that code. Cases cite docs/security-requirements.md where they come from.
import { SECTION } from '../src/constants.js';
import * as fx from '../test/fixtures.js';
import { concat, cutSection, flipByte, mutateJsonSection, mutateSection, sectionsOf, setPayloadLength } from '../test/package-surgery.js';
import { decodeHex, encodeHex } from '@org/envelope-crypto';
import { P, edgeRecords, le32 } from './ed25519-edges.js';
import { rogue, type RogueOptions } from './rogue.js';

const te = new TextEncoder();
export const MINIMAL = te.encode('{"workflows":[]}');
export const CHUNK = 1024;
export const SIGNERS = [
  { pair: fx.vendorSigner, text: 'released by vendor' },
  { pair: fx.reviewerA, text: 'reviewed by A' },
  { pair: fx.reviewerB, text: 'reviewed by B' },
];

/** Defaults shared by the valid vectors and the negative cases. */
export function base(seed: string, over: Partial<RogueOptions> = {}): RogueOptions {
  return {
    seed,
    content: MINIMAL,
    packager: fx.vendorPackager,
    recipients: [fx.deployment],
    signers: SIGNERS,
    createdAt: fx.FIXED_TIME,
    chunkSize: CHUNK,
    ...over,
  };
}

const u8 = (...parts: (Uint8Array | number[])[]) => concat(parts.map((p) => Uint8Array.from(p)));
const edit = (from: string, to: string) => (bytes: Uint8Array) => {
  const s = new TextDecoder().decode(bytes);
  if (!s.includes(from)) throw new Error(`generator: ${from} not found`);
  return te.encode(s.replace(from, to));
};
/** The minimal package with one edit to the HEADER text, re-sealed so the edit is its only defect. */
const header = (seed: string, from: string, to: string) => rogue(base(seed, { headerBytes: edit(from, to) }));
/** The minimal package with one edit to the STATEMENT text, re-signed so the edit is its only defect. */
const statement = (seed: string, from: string, to: string) => rogue(base(seed, { statementBytes: edit(from, to), header: (h) => h }));

/** A HEADER `packager` value: the hex of 32 bytes. */
const packagerHex = (bytes: Uint8Array) => <H extends { packager: string }>(h: H): H => ({ ...h, packager: encodeHex(bytes) });
/** The vendor packager key with bit 255 set: X25519 ignores that bit, so it is a non-canonical alias of a trusted key. */
const vendorPackagerTopBit = (() => {
  const b = fx.vendorPackager.publicKey.bytes.slice();
  b[31]! |= 0x80;
  return b;
})();
/** A small-order u (order 8) with bit 255 set: weak and non-canonical; weak decides (SPEC.md §2). */
const smallOrderTopBit = (() => {
  const b = decodeHex('e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800', 32);
  b[31]! |= 0x80;
  return b;
})();

/** Every negative case, keyed by file name without extension. */
export function negativeCases(small: Uint8Array, multi: Uint8Array, multiContent: Uint8Array): Record<string, Uint8Array> {
  const ms = sectionsOf(multi);
  const p0 = ms.payload.valueOffset;
  const sealedChunk = CHUNK + 16;
  const H = SECTION.HEADER;
  return {
    // S54 frame and magic
    'FORMAT_BAD_MAGIC--first-byte-changed': flipByte(small, 0),
    'FORMAT_BAD_MAGIC--zip-file': u8([0x50, 0x4b, 0x03, 0x04, 0x14, 0, 0, 0, 8, 0]),
    'FORMAT_BAD_MAGIC--text-file': te.encode('{"workflows":[]}\n'),
    'FORMAT_TRUNCATED--empty-file': new Uint8Array(0),
    'FORMAT_TRUNCATED--magic-prefix': small.slice(0, 5),
    // S55
    'FORMAT_VERSION_UNSUPPORTED--version-0': u8(small.subarray(0, 8), [0, 0], small.subarray(10)),
    'FORMAT_VERSION_UNSUPPORTED--version-3': u8(small.subarray(0, 8), [0, 3], small.subarray(10)),
    'FORMAT_VERSION_UNSUPPORTED--version-ffff': u8(small.subarray(0, 8), [0xff, 0xff], small.subarray(10)),
    'FORMAT_BAD_FLAGS--flags-1': u8(small.subarray(0, 10), [0, 1], small.subarray(12)),
    // S56
    'FORMAT_BAD_SECTIONS--header-missing': cutSection(small, H),
    'FORMAT_BAD_SECTIONS--statement-twice': (() => {
      const t = sectionsOf(small);
      return u8(small.subarray(0, 12), t.header.bytes, t.statement.bytes, t.statement.bytes, t.recipients.bytes, t.signatures.bytes, t.payload.bytes);
    })(),
    'FORMAT_BAD_SECTIONS--recipients-before-header': (() => {
      const t = sectionsOf(small);
      return u8(small.subarray(0, 12), t.recipients.bytes, t.header.bytes, t.statement.bytes, t.signatures.bytes, t.payload.bytes);
    })(),
    'FORMAT_BAD_SECTIONS--unknown-tag': u8(small.subarray(0, 12), [9], small.subarray(13)),
    // S57
    'FORMAT_SECTION_TOO_LARGE--header-length-ffffffff': u8(small.subarray(0, 13), [0xff, 0xff, 0xff, 0xff], small.subarray(17)),
    'FORMAT_SECTION_TOO_LARGE--recipients-1025-stanzas': mutateSection(small, SECTION.RECIPIENTS, (v) => concat(Array.from({ length: 1025 }, () => v))),
    'FORMAT_TRUNCATED--section-points-past-end': small.slice(0, 40),
    // S79, S80, S83
    'FORMAT_TRUNCATED--cut-inside-chunk': multi.slice(0, p0 + sealedChunk + 100),
    'FORMAT_TRUNCATED--cut-inside-last-tag': multi.slice(0, multi.length - 4),
    'FORMAT_TRUNCATED--final-chunk-removed-length-kept': multi.slice(0, p0 + 2 * sealedChunk),
    'FORMAT_TRUNCATED--final-chunk-removed-length-updated': setPayloadLength(multi.slice(0, p0 + 2 * sealedChunk), 2 * sealedChunk),
    'FORMAT_TRAILING_DATA--one-byte-appended': u8(small, [0]),
    'FORMAT_TRAILING_DATA--extra-chunk-length-unchanged': u8(multi, multi.subarray(p0, p0 + sealedChunk)),
    'FORMAT_TRAILING_DATA--extra-chunk-length-updated': setPayloadLength(u8(multi, multi.subarray(p0, p0 + sealedChunk)), ms.payload.length + sealedChunk),
    // S65–S69 strict JSON and fields
    'FORMAT_JSON_DUPLICATE_KEY--header-packageid-twice': header('dup-h', '"packageId":"hello-app"', '"packageId":"hello-app","packageId":"hello-app"'),
    'FORMAT_JSON_DUPLICATE_KEY--statement-packageid-twice': statement('dup-s', '"packageId":"hello-app"', '"packageId":"hello-app","packageId":"hello-app"'),
    'FORMAT_JSON_INVALID--header-lone-high-surrogate': header('hi-sur', '"createdAt"', '"\\ud800":1,"createdAt"'),
    'FORMAT_JSON_INVALID--header-lone-low-surrogate': header('lo-sur', '"createdAt"', '"\\udc00":1,"createdAt"'),
    'FORMAT_JSON_INVALID--header-size-2-53-plus-1': header('big', '"size":16', '"size":9007199254740993'),
    'FORMAT_JSON_INVALID--header-size-fraction': header('fraction', '"size":16', '"size":1.5'),
    'FORMAT_JSON_INVALID--statement-size-exponent': statement('exponent', '"size":16', '"size":1.6e1'),
    'FORMAT_JSON_INVALID--header-minus-zero': header('minus-zero', '"recipients":1', '"recipients":-0'),
    'FORMAT_JSON_INVALID--header-byte-order-mark': rogue(base('bom', { headerBytes: (v) => u8([0xef, 0xbb, 0xbf], v) })),
    'FORMAT_JSON_TOO_DEEP--statement-license-65-deep': rogue(base('deep', { statementBytes: edit('}}', `},"license":${'['.repeat(64)}${']'.repeat(64)}}`) })),
    'FORMAT_BAD_FIELD--header-size-negative': header('negative', '"size":16', '"size":-1'),
    'FORMAT_BAD_FIELD--header-c1-control-in-package-id': rogue(base('c1', { packageId: 'hello-app', headerBytes: edit('"packageId":"hello-app"', '"packageId":"hello-app\\u0085"') })),
    'FORMAT_BAD_FIELD--header-leap-second': header('leap', '12:00:00.000Z', '23:59:60.000Z'),
    // Regression: above the format's own maximum is a field out of range, not FORMAT_PAYLOAD_TOO_LARGE (§6 step 3)
    'FORMAT_BAD_FIELD--header-plaintext-size-over-format-limit': header('plain-over', '"plaintextSize":16', '"plaintextSize":4026531841'),
    'FORMAT_TOO_MANY_RECIPIENTS--header-declares-1025': header('1025', '"recipients":1', '"recipients":1025'),
    'FORMAT_BAD_FIELD--header-uppercase-hex': rogue(base('upper', { headerBytes: (b) => te.encode(new TextDecoder().decode(b).replace(/"packager":"([0-9a-f]+)"/, (_, h: string) => `"packager":"${h.toUpperCase()}"`)) })),
    'FORMAT_BAD_UTF8--header-invalid-utf8': mutateSection(small, H, (v) => {
      const out = v.slice();
      const i = new TextDecoder().decode(v).indexOf('hello-app') + 1;
      out.set([0xc3, 0x28], i);
      return out;
    }),
    'FORMAT_UNKNOWN_FIELD--header-policy-field': header('unknown-h', '"format":"oapp/v1"', '"format":"oapp/v1","requiredAdditionalSignerCount":0'),
    'FORMAT_UNKNOWN_FIELD--statement-policy-field': statement('unknown-s', '"format":"oapp-statement/v1"', '"format":"oapp-statement/v1","requiredSigners":[]'),
    // S100
    'FORMAT_UNSUPPORTED_ALGORITHM--aead-none': header('aead-none', '"aead":"chacha20-poly1305-stream/v1"', '"aead":"none"'),
    'FORMAT_UNSUPPORTED_ALGORITHM--aead-older': header('aead-old', '"aead":"chacha20-poly1305-stream/v1"', '"aead":"xsalsa20-poly1305/v0"'),
    // S71
    'FORMAT_BAD_RECIPIENTS--stanzas-one-byte-short': mutateSection(small, SECTION.RECIPIENTS, (v) => v.subarray(0, v.length - 1)),
    'FORMAT_BAD_RECIPIENTS--stanzas-one-byte-long': mutateSection(small, SECTION.RECIPIENTS, (v) => u8(v, [0])),
    'FORMAT_BAD_RECIPIENTS--count-differs-from-header': mutateSection(multi, SECTION.RECIPIENTS, (v) => v.subarray(0, 112)),
    // Regression: stanzas the writer never makes (§4.4)
    'FORMAT_DUPLICATE_RECIPIENT--two-stanzas-same-recipient': rogue(base('dup-recipient', { recipients: [fx.deployment, fx.deployment] })),
    // Two recipients whose stanzas carry one hint, forged at the section level (the hint is not authenticated; no
    // two real keys are known to share a hint): the reader refuses it as it refuses one recipient twice.
    'FORMAT_DUPLICATE_RECIPIENT--two-recipients-forged-equal-hints': mutateSection(multi, SECTION.RECIPIENTS, (v) => {
      const out = v.slice();
      out.set(v.subarray(112, 120), 0);
      return out;
    }),
    'FORMAT_DUPLICATE_NONCE--two-stanzas-one-nonce': rogue(base('dup-nonce', { recipients: [fx.otherDeployment, fx.deployment], stanzaNonce: () => new Uint8Array(24).fill(7) })),
    'FORMAT_BAD_SIGNATURES--record-truncated': mutateSection(small, SECTION.SIGNATURES, (v) => v.subarray(0, v.length - 1)),
    'FORMAT_TOO_MANY_SIGNATURES--65-records': mutateSection(small, SECTION.SIGNATURES, (v) => {
      const first = v.subarray(0, 98 + new DataView(v.buffer, v.byteOffset).getUint16(32));
      return concat(Array.from({ length: 65 }, () => first));
    }),
    'FORMAT_STATEMENT_MISMATCH--statement-other-package-id': statement('mismatch', '"packageId":"hello-app"', '"packageId":"hello-app-2"'),
    // S60
    'FORMAT_WRONG_KIND--bootstrap-as-app': rogue(base('wrong-kind', { kind: 'bootstrap', signers: [] })),
    // S73
    'CRYPTO_WEAK_KEY--packager-all-zero': rogue(base('weak', { header: (h) => ({ ...h, packager: '0'.repeat(64) }) })),
    'CRYPTO_WEAK_KEY--packager-small-order': rogue(base('weak-8', { header: (h) => ({ ...h, packager: 'e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800' }) })),
    // S176: non-canonical X25519 keys (SPEC.md §2): one code, CRYPTO_INVALID_PUBLIC_KEY; a weak key stays CRYPTO_WEAK_KEY
    'CRYPTO_INVALID_PUBLIC_KEY--packager-top-bit-set': rogue(base('packager-top-bit', { header: packagerHex(vendorPackagerTopBit) })),
    'CRYPTO_INVALID_PUBLIC_KEY--packager-u-is-p-plus-2': rogue(base('packager-p-plus-2', { header: packagerHex(le32(P + 2n)) })),
    'CRYPTO_INVALID_PUBLIC_KEY--packager-u-is-2-pow-255-minus-1': rogue(base('packager-max', { header: packagerHex(le32(2n ** 255n - 1n)) })),
    'CRYPTO_WEAK_KEY--packager-small-order-top-bit-set': rogue(base('weak-8-top-bit', { header: packagerHex(smallOrderTopBit) })),
    // S72, S74, S77
    'CRYPTO_NO_MATCHING_RECIPIENT--not-for-this-deployment': rogue(base('other-recipient', { recipients: [fx.otherDeployment] })),
    'CRYPTO_HEADER_MISMATCH--stanza-from-other-package': mutateSection(small, SECTION.RECIPIENTS, () => sectionsOf(rogue(base('another-package'))).recipients.value),
    'CRYPTO_HEADER_MISMATCH--created-at-changed': mutateJsonSection(small, H, (s) => s.replace('12:00:00.000Z', '12:00:01.000Z')),
    'FORMAT_STATEMENT_MISMATCH--header-content-size-changed': mutateJsonSection(small, H, (s) => s.replace('"size":16', '"size":17').replace('"plaintextSize":16', '"plaintextSize":17')),
    // S80, S81, S82, S85
    'CRYPTO_AUTH_FAILED--stanza-box-flipped': flipByte(small, sectionsOf(small).recipients.valueOffset + 40),
    'CRYPTO_AUTH_FAILED--middle-chunk-tag-flipped': flipByte(multi, p0 + 2 * sealedChunk - 1),
    'CRYPTO_AUTH_FAILED--final-chunk-tag-flipped': flipByte(multi, multi.length - 1),
    'CRYPTO_AUTH_FAILED--chunks-swapped': rogue(base('swapped', { content: multiContent, chunks: (_k, plain, seal) => [seal(1, false, plain[1]!), seal(0, false, plain[0]!), seal(2, true, plain[2]!)] })),
    'CRYPTO_AUTH_FAILED--middle-chunk-final-flag': rogue(base('middle-final', { content: multiContent, chunks: (_k, plain, seal) => [seal(0, false, plain[0]!), seal(1, true, plain[1]!), seal(2, true, plain[2]!)] })),
    // S96, S97
    'CRYPTO_CIPHERTEXT_MISMATCH--insider-replaced-payload': (() => {
      const forged = rogue(base('app-multichunk', { content: multiContent, payloadContent: multiContent.map((b) => b ^ 0x55) }));
      return u8(multi.subarray(0, p0), sectionsOf(forged).payload.value);
    })(),
    'CRYPTO_CONTENT_MISMATCH--declared-sha256-differs': rogue(base('content-mismatch', { statement: (s) => ({ ...s, content: { ...s.content, sha256: 'ab'.repeat(32) } }) })),
    // S75, S76, S98, S101
    'POLICY_PACKAGE_ID_MISMATCH--other-package-id': rogue(base('app-b', { packageId: 'app-b' })),
    'POLICY_PACKAGE_ID_MISMATCH--nfd-package-id': rogue(base('nfd', { packageId: 'hello-app\u0301' })),
    'POLICY_PACKAGER_NOT_TRUSTED--untrusted-packager': rogue(base('untrusted', { packager: fx.customerPackager })),
    'POLICY_PACKAGER_NOT_TRUSTED--copied-vendor-signatures': (() => {
      const attacker = rogue(base('attacker', { packager: fx.customerPackager, signers: [] }));
      return mutateSection(attacker, SECTION.SIGNATURES, () => sectionsOf(small).signatures.value);
    })(),
    // S86–S93
    'POLICY_REQUIRED_SIGNER_MISSING--no-signatures': rogue(base('unsigned', { signers: [] })),
    'POLICY_REQUIRED_SIGNER_MISSING--vendor-stripped-attacker-appended': rogue(base('stripped', { signers: [...SIGNERS.slice(1), { pair: fx.customerSigner, text: 'attacker' }] })),
    'POLICY_SIGNATURE_INVALID--flipped-signature-bit': flipByte(small, sectionsOf(small).signatures.valueOffset + 34 + 'released by vendor'.length + 10),
    'POLICY_SIGNATURE_INVALID--reviewer-c-record-from-other-package': rogue(base('foreign-record', {
      records: (r) => [...r, sectionsOfRecords(rogue(base('foreign', { packageId: 'app-b', signers: [{ pair: fx.reviewerC, text: 'C' }] })))],
    })),
    // S177: Ed25519 edge signatures (SPEC.md §5.1), each refused as libsodium refuses it. A named signer's record
    // with a small-order R or an unreduced S is POLICY_SIGNATURE_INVALID, although the bare equation holds for it.
    'POLICY_SIGNATURE_INVALID--vendor-small-order-r': rogue(base('ed-small-r', {
      records: (r, st) => [edgeRecords.smallOrderR('app', st, fx.vendorSigner.secretKey, SIGNERS[0]!.text), ...r.slice(1)],
    })),
    'POLICY_SIGNATURE_INVALID--vendor-s-plus-l': rogue(base('ed-s-plus-l', { records: (r) => [edgeRecords.unreducedS(r[0]!, 1n), ...r.slice(1)] })),
    'POLICY_SIGNATURE_INVALID--vendor-s-plus-8l-top-bits-set': rogue(base('ed-s-plus-8l', { records: (r) => [edgeRecords.unreducedS(r[0]!, 8n), ...r.slice(1)] })),
    // A small-order or y ≥ p key cannot be in a policy (SPEC.md §2), so its record is never counted: reviewer B's
    // record replaced by one leaves one of two additional signers.
    'POLICY_SIGNER_THRESHOLD_NOT_MET--reviewer-b-replaced-by-small-order-a': rogue(base('ed-small-a', { records: (r) => [r[0]!, r[1]!, edgeRecords.smallOrderA(SIGNERS[2]!.text)] })),
    'POLICY_SIGNER_THRESHOLD_NOT_MET--reviewer-b-replaced-by-non-canonical-a': rogue(base('ed-nc-a', { records: (r) => [r[0]!, r[1]!, edgeRecords.nonCanonicalA(r[2]!)] })),
    'POLICY_SIGNER_THRESHOLD_NOT_MET--one-of-two': rogue(base('threshold', { signers: SIGNERS.slice(0, 2) })),
    'POLICY_SIGNER_THRESHOLD_NOT_MET--duplicate-record-counted-once': rogue(base('duplicate', { signers: [SIGNERS[0]!, SIGNERS[1]!, SIGNERS[1]!] })),
  };
}

function sectionsOfRecords(pkg: Uint8Array) {
  const v = sectionsOf(pkg).signatures.value;
  const len = new DataView(v.buffer, v.byteOffset).getUint16(32);
  return { publicKey: v.slice(0, 32), signText: new TextDecoder().decode(v.subarray(34, 34 + len)), signature: v.slice(34 + len, 98 + len) };
}
