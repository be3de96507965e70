// authenticationProcessor of read-site-production (authentication context). The session is cached on the
// scripted-auth step inverter-login; when it is missing or expired, that step logs in first. The exchange
// property AGENT_AUTH_DATA tells it which scope to ask for. Only the Authorization header leaves this processor.
const LOGIN_STEP = 'inverter-login';
let session = context.getAuthenticationPropertiesFromStep(LOGIN_STEP, 'session');
if (session === null) {
  context.setProperty('AGENT_AUTH_DATA', JSON.stringify({ scope: context.getData('scope') }));
  const login = context.sendToStep(LOGIN_STEP, null);
  session = login.isErrored() ? null : context.getAuthenticationPropertiesFromStep(LOGIN_STEP, 'session');
  if (session === null) throw new Error('no inverter cloud session: the login failed');
}
context.setHeader('Authorization', 'Bearer ' + JSON.parse(session).accessToken);
