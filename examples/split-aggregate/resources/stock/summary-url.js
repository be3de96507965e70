// urlGenerator of stock-snapshot: the warehouse comes from the deployment's bootstrap `data`.
const warehouse = context.getData('warehouse');
if (!/^[A-Z]{3}-[0-9]{1,3}$/.test(warehouse || ''))
  throw new Error('bootstrap data "warehouse" must look like BER-1');
context.setHttpMethod('GET');
context.setUrl('inventory', '/v1/warehouses/' + warehouse + '/stock-summary');
