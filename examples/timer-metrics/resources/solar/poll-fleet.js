// Timer step: reads every configured site in turn and sends the fleet totals. Per-site metrics come from
// read-site-production; a site that fails is counted, not retried (the next tick reads the next window).
// All metrics carry the end of the window they describe as their timestamp.
const PERIOD_MS = 15 * 60 * 1000;
const sites = JSON.parse(context.getData('sites') || '[]');
const windowEnd = Math.floor(context.getTimestamp() / PERIOD_MS) * PERIOD_MS;

let energyWh = 0;
const failed = [];
for (const siteId of sites) {
  const res = context.sendToStep('read-site-production', JSON.stringify({ siteId, windowEnd }));
  const site =
    !res.isErrored() && res.getProperty('status_code') === '200' ? JSON.parse(res.getBody()) : null;
  if (site === null) failed.push(siteId);
  else energyWh += site.energyWh;
}

const reported = sites.length - failed.length;
context.sendMetric(windowEnd, 'solar.fleet.sites_reporting', reported);
context.sendMetric(windowEnd, 'solar.fleet.sites_failed', failed.length);
if (reported > 0) context.sendMetric(windowEnd, 'solar.fleet.energy_kwh', energyWh / 1000);
const missing = failed.length ? '; no data from ' + failed.join(', ') : '';
const when = new Date(windowEnd).toISOString();
context.diagnosticLog(
  `fleet window ending ${when}: ${reported} of ${sites.length} sites reported, ${energyWh / 1000} kWh${missing}`,
);
