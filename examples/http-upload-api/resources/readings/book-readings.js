// Second processor of both trigger steps: books the checked readings at the grid ledger (through the
// post-to-ledger step) and answers the caller. Processor data `source` says which endpoint received them.
//   ledger 2xx -> 201 {"accepted" : n, "totalKwh" : x, "ledgerRef" : "..."}
//   ledger 4xx -> 422 {"error" : "the ledger refused the readings"}
//   ledger 5xx, timeout or unreachable -> 502 {"error" : "ledger unavailable, try again later"}
const batch = JSON.parse(context.getBody());
const source = context.getData('source');
const now = context.getTimestamp();
// Sum in Wh so that the total does not collect binary rounding errors.
const totalKwh = batch.readings.reduce((wh, r) => wh + Math.round(r.kwh * 1000), 0) / 1000;

const ledgerBatch = {
  siteId: batch.siteId,
  source,
  receivedAt: new Date(now).toISOString(),
  readings: batch.readings,
};
const res = context.sendToStep('post-to-ledger', JSON.stringify(ledgerBatch));
const status = Number(res.getProperty('status_code'));
const dims = { site: batch.siteId, source };

context.setHeader('Content-Type', 'application/json');
if (!res.isErrored() && status >= 200 && status < 300) {
  const ledgerRef = JSON.parse(res.getBody()).ledgerRef;
  context.sendMetric(now, 'readings.accepted', batch.readings.length, dims);
  context.sendMetric(now, 'readings.kwh', totalKwh, dims);
  const count = batch.readings.length;
  context.diagnosticLog(
    `site ${batch.siteId}: ${count} readings (${totalKwh} kWh) from ${source} booked as ${ledgerRef}`,
  );
  context.setProperty('status_code', 201);
  context.setBody({ accepted: batch.readings.length, totalKwh, ledgerRef });
} else {
  const why = res.isErrored() ? 'error' : String(status);
  context.sendMetric(now, 'readings.ledger_failures', 1, { site: batch.siteId, status: why });
  if (!res.isErrored() && status >= 400 && status < 500) {
    context.setProperty('status_code', 422);
    context.setBody({ error: 'the ledger refused the readings' });
  } else {
    context.setProperty('status_code', 502);
    context.setBody({ error: 'ledger unavailable, try again later' });
  }
}
