// The rows the page shows and the text a person copies, from a PageReport. Every string that comes from the
// package or the policy goes through oapp-format's display functions (SPEC.md §6.4, S178), exactly as on the
// command line, and reaches the page only as text (textContent), never as markup.
import { displayJson, displayText } from '@org/oapp-format';
import type { PageReport, RuleResult } from './analyze.js';

/** One row of the package table: a label and its value, already in display form. */
export interface Row {
  readonly label: string;
  readonly value: string;
}

/** One row of the signatures table. */
export interface SignatureRow {
  readonly fingerprint: string;
  readonly status: string;
  readonly text: string;
}

const q = displayText;

function statusOf(s: NonNullable<PageReport['inspection']>['signatures'][number]): string {
  if (s.status === 'invalid') return 'INVALID signature';
  if (s.status === 'trusted') return `valid, ${s.signer} signer ${q(s.signerId ?? '')}`;
  return 'valid signature, UNKNOWN SIGNER (no policy names this key; its text is its own claim)';
}

export function packageRows(r: PageReport): Row[] {
  const i = r.inspection;
  const rows: Row[] = [{ label: 'file', value: `${q(r.file.name)}, ${r.file.size} bytes` }];
  if (i === null) return rows;
  const rel = r.release;
  rows.push(
    { label: 'package', value: `${q(i.packageId)} (${i.kind})` },
    { label: 'format', value: `${q(i.format)}, version ${rel?.formatVersion ?? i.version}` },
  );
  if (rel !== null && rel.sequence !== null) rows.push({ label: 'sequence', value: String(rel.sequence) });
  rows.push({ label: 'created', value: q(i.createdAt) });
  if (rel !== null && rel.expiresAt !== null) rows.push({ label: 'expires', value: q(rel.expiresAt) });
  if (rel !== null && rel.rollback !== null) {
    rows.push({
      label: 'release verdict',
      value: `${rel.rollback.verdict}${rel.rollback.code === null ? '' : ` (${rel.rollback.code})`}`,
    });
  }
  rows.push(
    {
      label: 'content',
      value: `${q(i.content.mediaType)}, ${i.content.size} bytes, sha256 ${i.content.sha256} (not opened here)`,
    },
    { label: 'packager', value: `${i.packager.fingerprint}  ${i.packager.publicKeyHex}` },
    {
      label: 'recipients',
      value: `${i.recipients.length}: ${i.recipients.map((x) => x.fingerprint).join(' ')}`,
    },
    { label: 'signatures', value: String(i.signatures.length) },
    { label: 'license', value: i.license === null ? 'none' : displayJson(i.license) },
    {
      label: 'envelope',
      value:
        i.envelope.length === 0
          ? '0 links (packaged here first)'
          : `${i.envelope.length} link(s): ${i.envelope.map((l) => `packager ${l.packager}, HEADER sha256 ${l.headerSha256}`).join('; ')}`,
    },
    {
      label: 'payload',
      value: `${i.payload.aead}, chunks of ${i.payload.chunkSize} bytes, ${i.payload.ciphertextBytes} bytes`,
    },
  );
  const p = r.payload;
  if (p !== null) {
    rows.push({
      label: 'payload hash',
      value: p.matches
        ? `matches the HEADER (sha256 ${p.expectedSha256})`
        : `DOES NOT MATCH the HEADER: ${p.problem ?? `sha256 ${p.actualSha256}, HEADER says ${p.expectedSha256}`}`,
    });
  }
  return rows;
}

export function signatureRows(r: PageReport): SignatureRow[] {
  return (r.inspection?.signatures ?? []).map((s) => ({
    fingerprint: s.fingerprint,
    status: statusOf(s),
    text: q(s.signText),
  }));
}

export function ruleLine(x: RuleResult): string {
  return x.ok ? 'pass' : `FAIL ${x.failure!.code}: ${x.failure!.message}`;
}

/** The verdict line, or null without a policy. */
export function verdictLine(r: PageReport): string | null {
  const v = r.policy;
  if (v === null) return null;
  if (v.error !== null) return `not judged: ${v.error.code}: ${v.error.message}`;
  const where = v.deploymentId === null ? '' : ` (deployment ${q(v.deploymentId)})`;
  return v.accepted ? `ACCEPTED by the policy${where}` : `REFUSED by the policy${where}`;
}

/** The whole report as plain text, for copying (the same lines as the page). */
export function reportText(r: PageReport): string {
  const lines: string[] = [];
  if (r.error !== null) lines.push(`error       ${r.error.code}: ${r.error.message}`);
  for (const row of packageRows(r)) lines.push(`${row.label.padEnd(11)} ${row.value}`);
  for (const s of signatureRows(r)) lines.push(`  ${s.fingerprint}  ${s.status}`, `      text ${s.text}`);
  const verdict = verdictLine(r);
  if (verdict !== null) {
    lines.push(`policy      ${verdict}`);
    for (const x of r.policy!.rules) lines.push(`  ${x.rule}: ${ruleLine(x)}`);
  }
  return lines.join('\n');
}
