// resultsProcessor of post-to-ledger for every status without a handler (2xx, 4xx): reduces the ledger's
// answer to {"booked", "ledgerRef"} for the calling step, which reads status_code itself.
const status = Number(context.getProperty('status_code'));
if (status >= 200 && status < 300) {
  const answer = JSON.parse(context.getBody());
  context.setBody(JSON.stringify({ booked: true, ledgerRef: answer.batchRef }));
} else {
  context.diagnosticLog('ledger refused the batch with status ' + status);
  context.setBody(JSON.stringify({ booked: false }));
}
