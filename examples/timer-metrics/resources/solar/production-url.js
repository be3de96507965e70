// urlGenerator of read-site-production: GET the site's production for the quarter hour ending at windowEnd.
// The message from poll-fleet stays readable with getPassedMessageAsString(); it is not sent as a GET body.
const PERIOD_MS = 15 * 60 * 1000;
const { siteId, windowEnd } = JSON.parse(context.getPassedMessageAsString());
if (!/^[a-z0-9-]{1,64}$/.test(siteId)) throw new Error('site ids are lower-case letters, digits and dashes');
const iso = (ms) => new Date(ms).toISOString().replace('.000Z', 'Z');
context.setBody(null);
context.setHttpMethod('GET');
const query = `from=${iso(windowEnd - PERIOD_MS)}&to=${iso(windowEnd)}&resolution=5m`;
context.setUrl('inverter-cloud', `/api/v3/sites/${siteId}/production?${query}`);
context.setHeader('Accept', 'application/json');
