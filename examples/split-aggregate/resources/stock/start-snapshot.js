// resultsProcessor of stock-snapshot: with the summary in hand, runs the split-aggregate step over the pages.
// Either failure (the summary, or any page) is logged and counted as stock.snapshot_failed; the totals are sent
// by collect-stock-pages only when every page was read.
const warehouse = context.getData('warehouse');
const status = context.getProperty('status_code');
const now = context.getTimestamp();

function failed(why) {
  context.diagnosticLog('stock snapshot of ' + warehouse + ' failed: ' + why);
  context.sendMetric(now, 'stock.snapshot_failed', 1, { warehouse });
}

if (status !== '200') {
  failed('the stock summary answered ' + status);
} else {
  const res = context.sendToStep('collect-stock-pages', context.getBody());
  if (res.isErrored()) failed(res.getAllErrors().join('; '));
}
