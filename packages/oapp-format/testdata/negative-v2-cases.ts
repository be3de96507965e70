// The format v2 and signed-bootstrap part of the negative corpus (SPEC.md §4.2, §4.3, §6 step 13a, §9). One defect
// per file, named `<CODE>--<defect>.<ext>`:
// - `.oapp`: opened like every package of the corpus (vectors.json policy and recipient), plus, for the rules that
//   depend on what the verifier remembers, the inputs vectors.json lists for the file under `negativeInputs`;
// - `.b64`: an encrypted bootstrap, opened with the bootstrap key tuple and the administrators of vectors.json;
// - `.sig`: a detached bootstrap signature, verified against vectors/bootstrap.json with those administrators.
import { encodeBase64, encodeHex, sha256 } from '@org/envelope-crypto';
import { signBootstrap } from '../src/bootstrap-signature.js';
import { writerRelease } from '../src/release.js';
import { signStatement } from '../src/signatures.js';
import { encodeStatement } from '../src/statement.js';
import { statementFor } from '../src/create.js';
import * as fx from '../test/fixtures.js';
import { base } from './negative-cases.js';
import { rogue, type RogueOptions } from './rogue.js';

const te = new TextEncoder();
const td = new TextDecoder();

/** The release sequence of the v2 vectors and of the v2 corpus. */
export const V2_SEQUENCE = 7;
/** A far expiry (the valid expiring vectors'): the boundary cases set the clock next to it. */
export const FAR_EXPIRY = new Date('2100-01-01T00:00:00.000Z');
/** A past expiry (the day after FIXED_TIME): every reader refuses it against its clock. */
export const PAST_EXPIRY = new Date('2026-11-02T00:00:00.000Z');
/** The plain bootstrap of the vectors (bytes of vectors/bootstrap.json). */
export const PLAIN_BOOTSTRAP = te.encode('[{"deploymentId":"d1","remoteConfiguration":"app.oapp"}]\n');
/** The administrators of the vectors: both must sign. */
export const ADMINS = [fx.adminA, fx.adminB];
export const ADMIN_THRESHOLD = 2;
export const ADMIN_SIGNERS = ADMINS.map((pair, i) => ({ pair, text: `bootstrap approved by administrator ${'AB'[i]}` }));

/** Freshness inputs of a `.oapp` negative file (JSON: `now` as text). */
export interface NegativeInputs {
  minimumSequence?: number;
  freshness?: {
    newest?: { sequence: number; contentSha256: string };
    now?: string;
    clockSkewSeconds?: number;
    allowSequence?: number;
  };
}

export interface V2Case {
  bytes: Uint8Array;
  ext: 'oapp' | 'b64' | 'sig';
  inputs?: NegativeInputs;
}

/** The v2 defaults: the v1 corpus's, frame version 2, sequence 7. */
export function base2(seed: string, over: Partial<RogueOptions> = {}): RogueOptions {
  return base(seed, { version: 2, sequence: V2_SEQUENCE, ...over });
}

const edit = (from: string, to: string) => (bytes: Uint8Array) => {
  const s = td.decode(bytes);
  if (!s.includes(from)) throw new Error(`generator: ${from} not found`);
  return te.encode(s.replace(from, to));
};
const oapp = (bytes: Uint8Array, inputs?: NegativeInputs): V2Case => (inputs ? { bytes, ext: 'oapp', inputs } : { bytes, ext: 'oapp' });
const header2 = (seed: string, from: string, to: string) => oapp(rogue(base2(seed, { headerBytes: edit(from, to) })));
const statement2 = (seed: string, from: string, to: string) => oapp(rogue(base2(seed, { statementBytes: edit(from, to), header: (h) => h })));
const CREATED = '"createdAt":"2026-11-01T12:00:00.000Z"';
const SEQ = `"sequence":${V2_SEQUENCE}`;

/** A bootstrap package (v2) as Base64 text. */
function bootstrapB64(seed: string, over: Partial<RogueOptions> = {}): V2Case {
  const bytes = rogue(
    base2(seed, { kind: 'bootstrap', packageId: 'bootstrap', content: PLAIN_BOOTSTRAP, signers: ADMIN_SIGNERS, chunkSize: 65536, ...over }),
  );
  return { bytes: te.encode(`${encodeBase64(bytes)}\n`), ext: 'b64' };
}

const sig = (text: string): V2Case => ({ bytes: te.encode(text), ext: 'sig' });
const adminSigners = (list = ADMIN_SIGNERS) => list.map((s) => ({ secretKey: s.pair.secretKey, signText: s.text }));
/** A signature file over `bytes` by the administrators. */
const signPlain = (over: Partial<Parameters<typeof signBootstrap>[1]> = {}, bytes = PLAIN_BOOTSTRAP) =>
  signBootstrap(bytes, { signers: adminSigners(), createdAt: fx.FIXED_TIME, sequence: 3, ...over });
/** The signature file with one member replaced (`value` as JSON text). */
function sigMember(name: string, value: string): string {
  const doc = JSON.parse(signPlain()) as Record<string, string>;
  return `{${Object.entries(doc)
    .map(([k, v]) => `${JSON.stringify(k)}:${k === name ? value : JSON.stringify(v)}`)
    .join(',')}}\n`;
}
/** One §4.5 record, encoded without the writer's checks (so a case can exceed its limits). */
function recordBytes(publicKey: Uint8Array, signText: string, signature: Uint8Array): Uint8Array {
  const t = te.encode(signText);
  const out = new Uint8Array(98 + t.length);
  out.set(publicKey, 0);
  new DataView(out.buffer).setUint16(32, t.length);
  out.set(t, 34);
  out.set(signature, 34 + t.length);
  return out;
}
const joined = (parts: Uint8Array[]) => {
  const all = new Uint8Array(parts.reduce((n, x) => n + x.length, 0));
  let off = 0;
  for (const x of parts) {
    all.set(x, off);
    off += x.length;
  }
  return all;
};
/** The administrators' records over `statementBytes`, encoded (each with `text(i)` as its signText). */
function adminRecords(statementBytes: Uint8Array, kind: 'app' | 'bootstrap' = 'bootstrap', version: 1 | 2 = 2, text = (i: number) => ADMIN_SIGNERS[i]!.text): Uint8Array[] {
  return ADMIN_SIGNERS.map((s, i) => {
    const r = signStatement(kind, statementBytes, s.pair.secretKey, text(i), version);
    return recordBytes(r.publicKey, r.signText, r.signature);
  });
}
/** A signature file of these STATEMENT bytes and SIGNATURES bytes. */
const sigFile = (statementBytes: Uint8Array, signatures: Uint8Array) =>
  `${JSON.stringify({ format: 'oapp-bootstrap-signature/v1', statement: encodeBase64(statementBytes), signatures: encodeBase64(signatures) })}\n`;
/** A signature file whose STATEMENT is `statement` (encoded), signed by the administrators as a bootstrap statement. */
function sigWithStatement(statementBytes: Uint8Array, kind: 'app' | 'bootstrap' = 'bootstrap', version: 1 | 2 = 2): string {
  return sigFile(statementBytes, joined(adminRecords(statementBytes, kind, version)));
}
/** `n` records of a key that is no administrator (neither verified nor counted: only their number and size matter). */
const strangerRecords = (n: number, signText = '') =>
  Array.from({ length: n }, () => recordBytes(fx.customerSigner.publicKey.bytes, signText, new Uint8Array(64)));
/** The signature file with a Base64 member re-encoded non-canonically: the last character before `=` with a set unused bit. */
function nonZeroPadBits(): string {
  const doc = JSON.parse(signPlain()) as Record<string, string>;
  const name = ['signatures', 'statement'].find((k) => doc[k]!.endsWith('='));
  if (name === undefined) throw new Error('generator: no padded Base64 member');
  const b64 = doc[name]!;
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  const at = b64.replace(/=+$/, '').length - 1;
  const next = alphabet[alphabet.indexOf(b64[at]!) + 1]!; // its lowest bit is one of the unused ones
  if (Buffer.from(b64.slice(0, at) + next + b64.slice(at + 1), 'base64').equals(Buffer.from(b64, 'base64')) === false)
    throw new Error('generator: the pad-bit change altered the bytes');
  return sigMember(name, JSON.stringify(b64.slice(0, at) + next + b64.slice(at + 1)));
}
const plainStatement = (over: { kind?: 'app' | 'bootstrap'; packageId?: string; version?: 1 | 2; license?: Record<string, unknown> } = {}) =>
  encodeStatement(
    statementFor(
      over.kind ?? 'bootstrap',
      over.packageId ?? 'bootstrap',
      PLAIN_BOOTSTRAP.length,
      encodeHex(sha256(PLAIN_BOOTSTRAP)),
      over.license,
      writerRelease({ formatVersion: over.version ?? 2, createdAt: fx.FIXED_TIME, ...(over.version === 1 ? {} : { sequence: 3 }) }),
    ),
  );
/** The signature records of a file, with byte `i` from the end flipped. */
function flippedRecords(text: string, fromEnd: number): string {
  const doc = JSON.parse(text) as Record<string, string>;
  const b = Buffer.from(doc['signatures']!, 'base64');
  b[b.length - fromEnd]! ^= 0x01;
  return `${JSON.stringify({ ...doc, signatures: b.toString('base64') })}\n`;
}

/** Every v2 and signed-bootstrap negative case, keyed by file name without extension. */
export function negativeV2Cases(v2Minimal: Uint8Array): Record<string, V2Case> {
  const contentSha = encodeHex(sha256(base2('x').content));
  const evil = PLAIN_BOOTSTRAP.map((b, i) => (i === 3 ? 0x45 : b)); // same length, another deploymentId letter
  return {
    // Member sets per version (SPEC.md §4.1 rule 9, §4.2, §4.3, §13)
    'FORMAT_UNKNOWN_FIELD--v1-header-with-sequence': oapp(rogue(base('v1-seq', { headerBytes: edit('"packageId":"hello-app"', '"packageId":"hello-app","sequence":1') }))),
    'FORMAT_UNKNOWN_FIELD--v1-statement-with-expires-at': oapp(rogue(base('v1-exp', { statementBytes: edit('"packageId":"hello-app"', '"packageId":"hello-app","expiresAt":"2027-01-01T00:00:00.000Z"'), header: (h) => h }))),
    'FORMAT_BAD_FIELD--v2-frame-header-format-v1': header2('v2-hv1', '"format":"oapp/v2"', '"format":"oapp/v1"'),
    'FORMAT_BAD_FIELD--v2-frame-statement-format-v1': statement2('v2-sv1', '"format":"oapp-statement/v2"', '"format":"oapp-statement/v1"'),
    'FORMAT_BAD_FIELD--v1-frame-v2-statement': oapp(rogue(base('v1-sv2', { statementBytes: edit('"format":"oapp-statement/v1","packageId":"hello-app"', `"format":"oapp-statement/v2","packageId":"hello-app","sequence":1,${CREATED}`), header: (h) => h }))),
    'FORMAT_BAD_FIELD--v2-header-sequence-missing': header2('v2-noseq', `${SEQ},`, ''),
    'FORMAT_BAD_FIELD--v2-statement-sequence-missing': statement2('v2-s-noseq', `${SEQ},`, ''),
    'FORMAT_BAD_FIELD--v2-header-sequence-negative': header2('v2-negseq', SEQ, '"sequence":-1'),
    'FORMAT_BAD_FIELD--v2-header-sequence-string': header2('v2-strseq', SEQ, `"sequence":"${V2_SEQUENCE}"`),
    'FORMAT_JSON_INVALID--v2-header-sequence-2-53': header2('v2-bigseq', SEQ, '"sequence":9007199254740992'),
    'FORMAT_JSON_INVALID--v2-statement-sequence-fraction': statement2('v2-fracseq', SEQ, '"sequence":7.0'),
    'FORMAT_BAD_FIELD--v2-header-expires-at-equals-created-at': header2('v2-exp-eq', CREATED, `${CREATED},"expiresAt":"2026-11-01T12:00:00.000Z"`),
    'FORMAT_BAD_FIELD--v2-statement-expires-at-before-created-at': statement2('v2-exp-before', CREATED, `${CREATED},"expiresAt":"2026-11-01T11:59:59.999Z"`),
    'FORMAT_BAD_FIELD--v2-header-expires-at-without-milliseconds': header2('v2-exp-ms', CREATED, `${CREATED},"expiresAt":"2027-01-01T00:00:00Z"`),
    // S171: HEADER and the signed STATEMENT disagree on a release field (the HEADER re-sealed, so that is the one defect)
    'FORMAT_STATEMENT_MISMATCH--v2-header-sequence-differs': oapp(rogue(base2('s171-seq', { header: (h) => ({ ...h, sequence: V2_SEQUENCE + 1 }) }))),
    'FORMAT_STATEMENT_MISMATCH--v2-header-created-at-differs': oapp(rogue(base2('s171-created', { header: (h) => ({ ...h, createdAt: '2026-11-01T12:00:01.000Z' }) }))),
    'FORMAT_STATEMENT_MISMATCH--v2-expires-at-only-in-header': oapp(rogue(base2('s171-exp-h', { header: (h) => ({ ...h, expiresAt: '2100-01-01T00:00:00.000Z' }) }))),
    'FORMAT_STATEMENT_MISMATCH--v2-expires-at-only-in-statement': statement2('s171-exp-s', CREATED, `${CREATED},"expiresAt":"2100-01-01T00:00:00.000Z"`),
    // §5.1: the version prefix of the signing message
    'POLICY_SIGNATURE_INVALID--v2-vendor-signed-with-v1-prefix': oapp(rogue(base2('v2-v1sig', { records: (r, st) => [signStatement('app', st, fx.vendorSigner.secretKey, 'released by vendor', 1), ...r.slice(1)] }))),
    'POLICY_SIGNATURE_INVALID--v1-vendor-signed-with-v2-prefix': oapp(rogue(base('v1-v2sig', { records: (r, st) => [signStatement('app', st, fx.vendorSigner.secretKey, 'released by vendor', 2), ...r.slice(1)] }))),
    // S172, S169, S170: §6 step 13a
    'POLICY_EXPIRED--v2-expired': oapp(rogue(base2('s172-expired', { expiresAt: PAST_EXPIRY }))),
    'POLICY_EXPIRED--v2-one-ms-past-the-skew': oapp(rogue(base2('s172-skew', { expiresAt: new Date('2100-01-01T00:00:00.000Z') })), {
      freshness: { now: '2100-01-01T00:05:00.001Z' },
    }),
    'POLICY_ROLLBACK--v2-older-than-newest': oapp(v2Minimal, { freshness: { newest: { sequence: V2_SEQUENCE + 1, contentSha256: 'ab'.repeat(32) } } }),
    'POLICY_ROLLBACK--v2-older-allow-names-another-sequence': oapp(v2Minimal, {
      freshness: { newest: { sequence: V2_SEQUENCE + 2, contentSha256: 'ab'.repeat(32) }, allowSequence: V2_SEQUENCE + 1 },
    }),
    'POLICY_ROLLBACK--v1-after-a-v2-newest': oapp(rogue(base('v1-after-v2')), { freshness: { newest: { sequence: 1, contentSha256: contentSha } } }),
    'POLICY_SEQUENCE_REUSED--v2-same-sequence-other-content': oapp(v2Minimal, { freshness: { newest: { sequence: V2_SEQUENCE, contentSha256: 'ab'.repeat(32) } } }),
    'POLICY_BELOW_MINIMUM--v2-below-floor-although-allowed': oapp(v2Minimal, { minimumSequence: V2_SEQUENCE + 1, freshness: { allowSequence: V2_SEQUENCE } }),
    'POLICY_BELOW_MINIMUM--v1-under-floor-0': oapp(rogue(base('v1-floor')), { minimumSequence: 0 }),
    // §6 step 8: the freshness inputs are checked with the policy, before the packager (here untrusted) is looked at,
    // and after the package's own defects (here a HEADER defect, then the file cut inside STATEMENT).
    'POLICY_INVALID--negative-clock-skew-untrusted-packager': oapp(rogue(base2('step8-skew', { packager: fx.customerPackager })), {
      freshness: { clockSkewSeconds: -1 },
    }),
    'POLICY_INVALID--newest-sha256-not-hex-untrusted-packager': oapp(rogue(base2('step8-newest', { packager: fx.customerPackager })), {
      freshness: { newest: { sequence: 1, contentSha256: 'zz'.repeat(32) } },
    }),
    'FORMAT_BAD_FIELD--header-defect-decides-before-invalid-inputs': oapp(rogue(base2('step8-order', { headerBytes: edit(SEQ, '"sequence":-1') })), {
      freshness: { clockSkewSeconds: -1 },
    }),
    // §6 step 2: sections are read and parsed one at a time, so the HEADER's defect decides, not the truncation.
    'FORMAT_BAD_FIELD--header-defect-decides-before-a-truncated-statement': (() => {
      const whole = rogue(base2('step2-order', { headerBytes: edit(SEQ, '"sequence":-1') }));
      const headerLength = new DataView(whole.buffer, whole.byteOffset).getUint32(13);
      return oapp(whole.slice(0, 12 + 5 + headerLength + 5 + 10)); // frame, HEADER, 10 bytes of STATEMENT
    })(),
    // S173: encrypted bootstraps opened with administrators (SPEC.md §9.1)
    'POLICY_SIGNER_THRESHOLD_NOT_MET--bootstrap-unsigned': bootstrapB64('boot-unsigned', { signers: [] }),
    'POLICY_SIGNER_THRESHOLD_NOT_MET--bootstrap-one-of-two-administrators': bootstrapB64('boot-one', { signers: ADMIN_SIGNERS.slice(0, 1) }),
    'POLICY_SIGNER_THRESHOLD_NOT_MET--bootstrap-signed-by-another-key': bootstrapB64('boot-other', { signers: [ADMIN_SIGNERS[0]!, { pair: fx.customerSigner, text: 'bootstrap approved by administrator B' }] }),
    'POLICY_SIGNER_THRESHOLD_NOT_MET--bootstrap-forged-with-deployment-key': bootstrapB64('boot-kci', { signers: [], content: evil, forgeWithRecipientKeys: true }),
    'POLICY_SIGNATURE_INVALID--bootstrap-administrator-signature-flipped': bootstrapB64('boot-flip', {
      records: (r) => [r[0]!, { ...r[1]!, signature: r[1]!.signature.map((b, i) => (i === 63 ? b ^ 0x01 : b)) }],
    }),
    'POLICY_SIGNATURE_INVALID--bootstrap-signed-as-app': bootstrapB64('boot-app-type', {
      records: (r, st) => [r[0]!, signStatement('app', st, ADMIN_SIGNERS[1]!.pair.secretKey, ADMIN_SIGNERS[1]!.text, 2)],
    }),
    // The forger holds the deployment key and copies the administrators' records of a genuine bootstrap: the HEADER
    // must then describe the signed content, and the payload it can seal is another.
    'CRYPTO_CONTENT_MISMATCH--bootstrap-forged-with-copied-administrator-signatures': bootstrapB64('boot-kci-copy', { payloadContent: evil, forgeWithRecipientKeys: true }),
    'POLICY_EXPIRED--bootstrap-expired': bootstrapB64('boot-expired', { expiresAt: PAST_EXPIRY }),
    // §1, §9.1: only TAB, LF, CR and SPACE are trimmed; a vertical tab or form feed is not Base64.
    'FORMAT_BAD_BASE64--bootstrap-text-vertical-tab-and-form-feed': (() => {
      const c = bootstrapB64('boot-vt');
      return { ...c, bytes: joined([te.encode('\v'), c.bytes.subarray(0, c.bytes.length - 1), te.encode('\f\n')]) };
    })(),
    // S173: detached signatures of vectors/bootstrap.json (SPEC.md §9.2)
    'CRYPTO_CONTENT_MISMATCH--bootstrap-changed-after-signing': sig(signPlain({}, evil)),
    'CRYPTO_CONTENT_MISMATCH--bootstrap-final-newline-removed': sig(signPlain({}, PLAIN_BOOTSTRAP.subarray(0, PLAIN_BOOTSTRAP.length - 1))),
    'POLICY_SIGNER_THRESHOLD_NOT_MET--signed-by-another-key': sig(signBootstrap(PLAIN_BOOTSTRAP, { signers: [{ secretKey: fx.customerSigner.secretKey, signText: 'me' }, ...adminSigners().slice(1)], createdAt: fx.FIXED_TIME, sequence: 3 })),
    'POLICY_SIGNER_THRESHOLD_NOT_MET--one-of-two-administrators': sig(signPlain({ signers: adminSigners().slice(0, 1) })),
    'POLICY_SIGNATURE_INVALID--administrator-signature-flipped': sig(flippedRecords(signPlain(), 1)),
    'POLICY_SIGNATURE_INVALID--signed-as-app-statement-type': sig(sigWithStatement(plainStatement(), 'app')),
    'POLICY_SIGNATURE_INVALID--signed-with-v1-prefix': sig(sigWithStatement(plainStatement(), 'bootstrap', 1)),
    'POLICY_EXPIRED--signature-expired': sig(signPlain({ expiresAt: PAST_EXPIRY })),
    'FORMAT_BAD_FIELD--signature-format-v2': sig(sigMember('format', '"oapp-bootstrap-signature/v2"')),
    'FORMAT_UNKNOWN_FIELD--signature-extra-member': sig(signPlain().replace(/}\n$/, ',"threshold":0}\n')),
    'FORMAT_JSON_DUPLICATE_KEY--signature-statement-twice': sig(signPlain().replace('"signatures"', `"statement":${JSON.stringify((JSON.parse(signPlain()) as Record<string, string>)['statement'])},"signatures"`)),
    'FORMAT_BAD_BASE64--signature-statement-with-line-break': sig(sigMember('statement', JSON.stringify((JSON.parse(signPlain()) as Record<string, string>)['statement']!.replace(/^(.{76})/, '$1\n')))),
    'FORMAT_BAD_FIELD--signature-statement-v1': sig(sigWithStatement(plainStatement({ version: 1 }), 'bootstrap', 1)),
    'FORMAT_WRONG_KIND--signature-app-statement': sig(sigWithStatement(plainStatement({ kind: 'app' }), 'app')),
    'FORMAT_BAD_FIELD--signature-package-id-not-bootstrap': sig(sigWithStatement(plainStatement({ packageId: 'hello-app' }))),
    // Each malformed form and limit of §9.2 (S173): a reader without the rule would accept the file or give another code.
    'FORMAT_BAD_FIELD--signature-signatures-missing': sig(`${JSON.stringify({ format: 'oapp-bootstrap-signature/v1', statement: (JSON.parse(signPlain()) as Record<string, string>)['statement'] })}\n`),
    'FORMAT_BAD_BASE64--signature-nonzero-pad-bits': sig(nonZeroPadBits()),
    'FORMAT_JSON_INVALID--signature-byte-order-mark': { bytes: joined([Uint8Array.of(0xef, 0xbb, 0xbf), te.encode(signPlain())]), ext: 'sig' },
    // "/" as the overlong C0 AF: a lenient decoder reads U+FFFD and then another format string.
    'FORMAT_BAD_UTF8--signature-overlong-slash-in-format': (() => {
      const text = signPlain();
      const at = text.indexOf('signature/v1') + 'signature'.length;
      return { bytes: joined([te.encode(text.slice(0, at)), Uint8Array.of(0xc0, 0xaf), te.encode(text.slice(at + 1))]), ext: 'sig' as const };
    })(),
    // The file one byte over 131 072 (insignificant whitespace before its final LF: otherwise a valid file).
    'FORMAT_SECTION_TOO_LARGE--signature-file-131073-bytes': sig(signPlain().replace(/\n$/, ' '.repeat(131_073 - signPlain().length) + '\n')),
    // A STATEMENT of 16 385 bytes (a long license, which readers otherwise accept), validly signed.
    'FORMAT_SECTION_TOO_LARGE--signature-statement-16385-bytes': (() => {
      const padded = (n: number) => plainStatement({ license: { note: 'x'.repeat(n) } });
      const st = padded(16_385 - padded(0).length);
      if (st.length !== 16_385) throw new Error('generator: statement size');
      return sig(sigWithStatement(st));
    })(),
    // Records of 71 809 bytes: both administrators and 62 other records, each with a 1024-byte signText (64 × 1122 =
    // 71 808, the limit), and one byte more (without the limit: FORMAT_TOO_MANY_SIGNATURES).
    'FORMAT_SECTION_TOO_LARGE--signature-records-71809-bytes': (() => {
      const st = plainStatement();
      const long = (i: number) => ADMIN_SIGNERS[i]!.text.padEnd(1024, '.');
      const records = joined([...adminRecords(st, 'bootstrap', 2, long), ...strangerRecords(62, 'x'.repeat(1024)), Uint8Array.of(0)]);
      if (records.length !== 71_809) throw new Error('generator: records size');
      return sig(sigFile(st, records));
    })(),
    // 65 records (both administrators and 63 records of another key), 6 370 bytes: within the byte limit.
    'FORMAT_TOO_MANY_SIGNATURES--signature-65-records': sig(sigFile(plainStatement(), joined([...adminRecords(plainStatement()), ...strangerRecords(63)]))),
    // After expiresAt + the default skew of 300 s by 1 ms (the vectors.json clock); exactly at it the file is accepted.
    'POLICY_EXPIRED--signature-one-ms-past-the-skew': {
      ...sig(signPlain({ expiresAt: FAR_EXPIRY })),
      inputs: { freshness: { now: '2100-01-01T00:05:00.001Z' } },
    },
    'FORMAT_BAD_SIGNATURES--signature-record-truncated': sig(sigMember('signatures', JSON.stringify(encodeBase64(Buffer.from((JSON.parse(signPlain()) as Record<string, string>)['signatures']!, 'base64').subarray(0, 120))))),
  };
}
