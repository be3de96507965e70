// runOnce: reports the configuration the deployment gave in its bootstrap `data` (sites, scope).
const sites = JSON.parse(context.getData('sites') || '[]');
if (!Array.isArray(sites) || sites.length === 0) {
  context.diagnosticLog(
    'solar fleet monitor: no sites configured (bootstrap data "sites"); nothing will be polled',
  );
} else {
  context.diagnosticLog(
    'solar fleet monitor: ' + sites.length + ' sites, polled every 15 minutes: ' + sites.join(', '),
  );
}
