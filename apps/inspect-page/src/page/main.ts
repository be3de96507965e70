// The page: reads a dropped or chosen .oapp and an optional policy, and shows the report. Every value reaches the
// page through textContent (never markup); the values are already in the display form (./view.ts).
import { analyze, parsePolicyText, type PageReport } from './analyze.js';
import { packageRows, reportText, ruleLine, signatureRows, verdictLine } from './view.js';

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;

const form = $<HTMLFormElement>('form');
const fileInput = $<HTMLInputElement>('file');
const policyText = $<HTMLTextAreaElement>('policy');
const policyFile = $<HTMLInputElement>('policy-file');
const deploymentField = $<HTMLDivElement>('deployment-field');
const deploymentSelect = $<HTMLSelectElement>('deployment');
const status = $<HTMLParagraphElement>('status');
const progress = $<HTMLProgressElement>('progress');
const results = $<HTMLElement>('results');
const reportBox = $<HTMLTextAreaElement>('report');
const copied = $<HTMLSpanElement>('copied');

let packageFile: File | null = null;
let last: PageReport | null = null;
let running = 0;

/** A macrotask boundary (MessageChannel: no 4 ms clamp), so input and painting go on between payload pieces. */
function yieldToPage(): Promise<void> {
  return new Promise((resolve) => {
    const ch = new MessageChannel();
    ch.port1.onmessage = () => resolve();
    ch.port2.postMessage(null);
  });
}

function cell(tag: 'td' | 'th', text: string, cls?: string): HTMLElement {
  const el = document.createElement(tag);
  el.textContent = text;
  if (tag === 'th') el.setAttribute('scope', 'row');
  if (cls !== undefined) el.className = cls;
  return el;
}

function fill(tableId: string, rows: HTMLElement[][]): void {
  const body = $<HTMLTableElement>(tableId).tBodies[0]!;
  body.replaceChildren(
    ...rows.map((cells) => {
      const tr = document.createElement('tr');
      tr.append(...cells);
      return tr;
    }),
  );
}

function render(r: PageReport): void {
  const rows = packageRows(r).map((row) => {
    const bad = row.label === 'payload hash' && !r.payload?.matches;
    return [cell('th', row.label), cell('td', row.value, bad ? 'bad' : undefined)];
  });
  if (r.error !== null)
    rows.unshift([cell('th', 'error'), cell('td', `${r.error.code}: ${r.error.message}`, 'bad')]);
  fill('package-table', rows);
  fill(
    'signature-table',
    signatureRows(r).map((s) => [
      cell('td', s.fingerprint),
      cell('td', s.status, s.status.startsWith('INVALID') ? 'bad' : undefined),
      cell('td', s.text),
    ]),
  );
  const section = $<HTMLDivElement>('policy-section');
  const verdict = verdictLine(r);
  section.hidden = verdict === null;
  if (verdict !== null) {
    const v = $<HTMLParagraphElement>('verdict');
    v.textContent = verdict;
    v.className = r.policy!.accepted ? 'good' : 'bad';
    fill(
      'rule-table',
      r.policy!.rules.map((x) => [cell('th', x.rule), cell('td', ruleLine(x), x.ok ? 'good' : 'bad')]),
    );
    const ignored = r.policy!.secretKeysIgnored;
    if (ignored > 0) v.textContent += ` (${ignored} secret key(s) in the policy were left out, unread)`;
  }
  reportBox.value = reportText(r);
  results.hidden = false;
}

function refreshDeployments(): void {
  let ids: readonly string[] = [];
  try {
    if (policyText.value.trim() !== '') ids = parsePolicyText(policyText.value).deployments;
  } catch {
    ids = [];
  }
  const keep = deploymentSelect.value;
  deploymentSelect.replaceChildren(
    ...ids.map((id) => {
      const o = document.createElement('option');
      o.value = id;
      o.textContent = id;
      return o;
    }),
  );
  if (ids.includes(keep)) deploymentSelect.value = keep;
  deploymentField.hidden = ids.length < 2;
}

async function run(): Promise<void> {
  if (packageFile === null) {
    status.textContent = 'Choose a package first.';
    return;
  }
  const mine = ++running;
  const file = packageFile;
  status.textContent = `Reading ${file.name} (${file.size} bytes)…`;
  document.body.setAttribute('aria-busy', 'true');
  progress.hidden = false;
  progress.value = 0;
  try {
    const r = await analyze(file, file.name, {
      policyText: policyText.value,
      deploymentId: deploymentField.hidden ? undefined : deploymentSelect.value,
      yieldToPage,
      progress: (done, total) => {
        if (mine === running) progress.value = total === 0 ? 1 : done / total;
      },
    });
    if (mine !== running) return;
    last = r;
    render(r);
    const problems =
      (r.error === null ? 0 : 1) +
      (r.payload !== null && !r.payload.matches ? 1 : 0) +
      (r.inspection?.signatures.filter((s) => !s.valid).length ?? 0);
    status.textContent =
      problems === 0
        ? `Done: ${file.name} read, no format, signature or payload hash problem${r.policy === null ? '' : `; ${verdictLine(r)}`}.`
        : `Done: ${file.name} has ${problems} problem(s)${r.policy === null ? '' : `; ${verdictLine(r)}`}.`;
  } catch {
    if (mine === running) status.textContent = 'The page failed unexpectedly (see the browser console).';
  } finally {
    if (mine === running) {
      progress.hidden = true;
      document.body.removeAttribute('aria-busy');
      document.body.dataset['state'] = 'done';
      document.body.dataset['runs'] = String(Number(document.body.dataset['runs'] ?? '0') + 1);
    }
  }
}

function start(): void {
  document.body.dataset['state'] = 'working';
  void run();
}

form.addEventListener('submit', (e) => {
  e.preventDefault();
  start();
});
fileInput.addEventListener('change', () => {
  packageFile = fileInput.files?.[0] ?? null;
  start();
});
async function loadPolicy(f: File): Promise<void> {
  policyText.value = await f.text();
  refreshDeployments();
  if (packageFile !== null) start();
}

policyFile.addEventListener('change', () => {
  const f = policyFile.files?.[0];
  if (f !== undefined) void loadPolicy(f);
});
policyText.addEventListener('input', refreshDeployments);

// Drops: on the policy box, the policy; anywhere else, the package.
document.addEventListener('dragover', (e) => {
  e.preventDefault();
  document.body.classList.add('dragging');
});
document.addEventListener('dragleave', () => document.body.classList.remove('dragging'));
document.addEventListener('drop', (e) => {
  e.preventDefault();
  document.body.classList.remove('dragging');
  const f = e.dataTransfer?.files[0];
  if (f === undefined) return;
  if (e.target === policyText) {
    void loadPolicy(f);
    return;
  }
  packageFile = f;
  start();
});

async function copy(text: string): Promise<void> {
  try {
    await navigator.clipboard.writeText(text);
    copied.textContent = 'Copied.';
  } catch {
    // No clipboard access (a file:// page, or permission refused): select the text for the person to copy.
    reportBox.value = text;
    reportBox.focus();
    reportBox.select();
    copied.textContent = 'Selected: press Ctrl+C (⌘C) to copy.';
  }
}
$('copy-text').addEventListener('click', () => void copy(reportText(last!)));
// JSON escapes controls itself; bidi, zero-width and separator characters become \uXXXX too (still the same JSON
// value), so none of them reaches whatever the JSON is pasted into.
const INVISIBLE = /[\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060\u2066-\u2069\ufeff]/g;
const jsonOf = (r: PageReport | null) =>
  JSON.stringify(r, null, 2).replace(INVISIBLE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
$('copy-json').addEventListener('click', () => void copy(jsonOf(last)));
document.body.dataset['state'] = 'ready';
