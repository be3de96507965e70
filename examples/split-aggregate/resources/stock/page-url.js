// urlGenerator of collect-stock-pages, once per item: GET one page of the warehouse's stock list. The page
// number is kept as a run property for the status handler (after the call the body is the answer); the item
// itself is not sent as a GET body.
const { page } = JSON.parse(context.getBody());
const pageSize = Number(context.getData('pageSize') || 100);
context.setProperty('stock.page', page);
context.setBody(null);
context.setHttpMethod('GET');
context.setUrl(
  'inventory',
  '/v1/warehouses/' + context.getData('warehouse') + '/stock?page=' + page + '&pageSize=' + pageSize,
);
