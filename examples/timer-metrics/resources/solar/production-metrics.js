// resultsProcessor of read-site-production (2xx answers): sums the 5-minute intervals (Wh) of the window and
// sends the site's metrics with the window end as timestamp. Leaves {"siteId", "energyWh"} for poll-fleet.
const { siteId, windowEnd } = JSON.parse(context.getPassedMessageAsString());
const answer = JSON.parse(context.getBody());
const energyWh = answer.intervals.reduce((sum, i) => sum + i.energyWh, 0);
const offline = answer.inverters.total - answer.inverters.online;
context.sendMetric(windowEnd, 'solar.site.energy_kwh', energyWh / 1000, { site: siteId });
context.sendMetric(windowEnd, 'solar.site.inverters_offline', offline, { site: siteId });
if (offline > 0)
  context.diagnosticLog(siteId + ': ' + offline + ' of ' + answer.inverters.total + ' inverters offline');
context.setBody(JSON.stringify({ siteId, energyWh }));
