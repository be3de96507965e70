// Prepares the outbound call to the ledger host declared in the bootstrap.
context.setHttpMethod('POST');
context.setUrl('ledger', '/v1/invoices');
context.setHeader('Content-Type', 'application/json');
