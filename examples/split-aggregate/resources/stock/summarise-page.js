// itemResultProcessor of collect-stock-pages (2xx answers): reduces one page of the stock list to its counts,
// which becomes this item's element in the aggregate.
const answer = JSON.parse(context.getBody());
const below = answer.items.filter((i) => i.onHand < i.reorderPoint).map((i) => i.sku);
context.setBody(
  JSON.stringify({
    page: answer.page,
    skus: answer.items.length,
    units: answer.items.reduce((n, i) => n + i.onHand, 0),
    belowReorderPoint: below,
  }),
);
