// First processor of submit-reading: checks one reading sent as JSON and leaves the batch form that
// book-readings.js expects in the body: {"siteId": ..., "readings": [{"meterId", "readAt", "kwh"}]}.
// A request that breaks the schema is answered 400 {"error" : "<path>: <reason>"} by doc.asUserErrors(), and
// the rest of the step does not run.
const readingSchema = {
  type: 'object',
  required: ['siteId', 'meterId', 'readAt', 'kwh'],
  additionalProperties: false,
  properties: {
    siteId: { type: 'string', pattern: '^S-[0-9]{1,6}$' },
    meterId: { type: 'string', pattern: '^M-[0-9]{3,8}$' },
    readAt: { type: 'string', pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$' },
    kwh: { type: 'number', minimum: 0, maximum: 100000 },
  },
};

doc
  .description('one meter reading')
  .inSchema(readingSchema)
  .asUserErrors()
  .run(() => {
    const r = JSON.parse(context.getBody());
    // Clock skew of devices is tolerated up to five minutes; later readings are refused.
    if (Date.parse(r.readAt) > context.getTimestamp() + 5 * 60 * 1000) {
      context.setProperty('status_code', 400);
      context.setHeader('Content-Type', 'application/json');
      context.setBody({ error: 'body/readAt: in the future' });
      context.end();
      return;
    }
    context.setBody(
      JSON.stringify({ siteId: r.siteId, readings: [{ meterId: r.meterId, readAt: r.readAt, kwh: r.kwh }] }),
    );
  });
