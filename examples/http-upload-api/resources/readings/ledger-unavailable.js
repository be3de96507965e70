// httpStatusHandling "500-599" of post-to-ledger: the ledger failed. Logged here; the calling step answers
// 502 and counts the failure.
const status = context.getProperty('status_code');
const batch = JSON.parse(context.getPassedMessageAsString());
context.diagnosticLog('ledger answered ' + status + ' for site ' + batch.siteId + '; nothing was booked');
context.setBody(JSON.stringify({ booked: false }));
