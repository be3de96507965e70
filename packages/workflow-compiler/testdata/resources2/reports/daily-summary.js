// Sends a metric with the number of invoices seen since the last run; "ünïcödé" stays UTF-8.
const seen = context.counter('invoices-seen', 0);
context.sendMetric('invoices-daily', seen);
context.diagnosticLog('daily summary: ' + seen);
