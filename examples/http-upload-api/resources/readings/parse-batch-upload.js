// First processor of upload-readings: reads the multipart upload. The `body` part is JSON metadata
// ({"siteId": "S-17", "device": "..."}), the `stream` part a CSV file with the header line
// `meterId,readAt,kwh`. Leaves {"siteId", "readings": [...]} in the body for book-readings.js, or answers
// 400 {"error" : "..."} naming the first problem and stops the step.
const HEADER = 'meterId,readAt,kwh';
const METER = /^M-[0-9]{3,8}$/;
const ISO_UTC = /^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$/;
const maxRows = Number(context.getData('maxRowsPerBatch') || 500);
const latest = context.getTimestamp() + 5 * 60 * 1000;

function refuse(message) {
  context.setProperty('status_code', 400);
  context.setHeader('Content-Type', 'application/json');
  context.setBody({ error: message });
  context.end();
}

function parseMetadata(text) {
  try {
    const m = JSON.parse(text);
    return m !== null && typeof m === 'object' && !Array.isArray(m) ? m : undefined;
  } catch {
    return undefined;
  }
}

function parseRow(line, n) {
  const cells = line.split(',').map((c) => c.trim());
  if (cells.length !== 3) return 'line ' + n + ': expected 3 columns, found ' + cells.length;
  const [meterId, readAt, kwhText] = cells;
  if (!METER.test(meterId)) return 'line ' + n + ': meterId must look like M-1001';
  if (!ISO_UTC.test(readAt) || Number.isNaN(Date.parse(readAt)))
    return 'line ' + n + ': readAt must be a UTC time like 2024-03-01T06:00:00Z';
  if (Date.parse(readAt) > latest) return 'line ' + n + ': readAt is in the future';
  const kwh = Number(kwhText);
  if (kwhText === '' || !Number.isFinite(kwh) || kwh < 0) return 'line ' + n + ': kwh must be a number >= 0';
  return { meterId, readAt, kwh };
}

const meta = parseMetadata(context.getBody() || '');
if (meta === undefined) return refuse('the body part must be a JSON object');
if (typeof meta.siteId !== 'string' || !/^S-[0-9]{1,6}$/.test(meta.siteId))
  return refuse('body.siteId must look like S-17');

const csv = context.bytes().toString(context.getStream().readAll());
const lines = csv.split(/\r?\n/);
if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
if (lines.length === 0) return refuse('the stream part must be a CSV file');
if (lines[0].trim() !== HEADER) return refuse('line 1: expected the header ' + HEADER);
if (lines.length - 1 > maxRows) return refuse('at most ' + maxRows + ' readings per batch');

const readings = [];
for (let i = 1; i < lines.length; i++) {
  const row = parseRow(lines[i], i + 1);
  if (typeof row === 'string') return refuse(row);
  readings.push(row);
}
if (readings.length === 0) return refuse('the CSV file holds no readings');

const device = meta.device ? ` (${meta.device})` : '';
context.diagnosticLog(`batch upload from site ${meta.siteId}${device}: ${readings.length} readings`);
context.setBody(JSON.stringify({ siteId: meta.siteId, readings }));
