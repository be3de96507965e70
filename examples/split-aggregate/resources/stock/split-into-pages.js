// splitGenerator of collect-stock-pages: one item {"page": n} per page of `pageSize` SKUs (bootstrap data,
// default 100). A warehouse without SKUs gives no items: the resultsProcessor then gets [].
const summary = JSON.parse(context.getBody());
const pageSize = Number(context.getData('pageSize') || 100);
const maxPages = Number(context.getData('maxPages') || 500);
const pages = Math.ceil(summary.skuCount / pageSize);
if (!Number.isInteger(pages) || pages < 0) throw new Error('the stock summary has no usable skuCount');
if (pages > maxPages) {
  context.addSystemError(summary.skuCount + ' SKUs need ' + pages + ' pages, more than maxPages ' + maxPages);
} else {
  for (let page = 1; page <= pages; page++) context.addSplitReturnItem({ page });
}
