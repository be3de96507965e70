// resultsProcessor of inverter-login: caches the access token on this step until one minute before it
// expires. A refused login is logged (status only: the answer may echo credentials) and errors the step, so
// the caller's authenticationProcessor fails and no API call is made with a stale token.
const status = context.getProperty('status_code');
if (status !== '200') {
  context.diagnosticLog('inverter cloud login refused with status ' + status);
  context.addSystemError('inverter cloud login refused with status ' + status);
} else {
  const token = JSON.parse(context.getBody());
  const ttlMs = Math.max(0, (Number(token.expires_in) - 60) * 1000);
  context.setAuthenticationPropertiesOnStep(
    'inverter-login',
    ttlMs,
    'session',
    JSON.stringify({ accessToken: token.access_token }),
  );
  context.diagnosticLog('inverter cloud session cached for ' + ttlMs / 60000 + ' minutes');
}
