// resultsProcessor of collect-stock-pages: runs once, after every page was read, with the body a JSON array of
// the page summaries in page order. Sends the warehouse totals as metrics and leaves them as the step's result.
const pages = JSON.parse(context.getBody());
const summary = JSON.parse(context.getPassedMessageAsString());
const warehouse = context.getData('warehouse');
const now = context.getTimestamp();

const skus = pages.reduce((n, p) => n + p.skus, 0);
const units = pages.reduce((n, p) => n + p.units, 0);
const below = pages.flatMap((p) => p.belowReorderPoint);
const dims = { warehouse };

context.sendMetric(now, 'stock.pages', pages.length, dims);
context.sendMetric(now, 'stock.skus', skus, dims);
context.sendMetric(now, 'stock.units_on_hand', units, dims);
context.sendMetric(now, 'stock.skus_below_reorder_point', below.length, dims);

if (skus !== summary.skuCount) {
  context.diagnosticLog(
    `${warehouse}: the summary counted ${summary.skuCount} SKUs, the pages listed ${skus} (stock changed while paging)`,
  );
}
const belowList = below.length ? ': ' + below.join(', ') : '';
context.diagnosticLog(
  `${warehouse}: ${skus} SKUs on ${pages.length} pages, ${units} units on hand, ${below.length} below reorder point${belowList}`,
);
context.setBody({ warehouse, skus, units, belowReorderPoint: below });
