// httpStatusHandling "400-599" of collect-stock-pages: a page that cannot be read makes the snapshot
// incomplete. addSystemError fails this item; no further page starts and the resultsProcessor does not run.
const page = context.getProperty('stock.page');
const status = context.getProperty('status_code');
const why = `page ${page} of ${context.getData('warehouse')}: the inventory API answered ${status}`;
context.diagnosticLog(why);
context.addSystemError(why);
