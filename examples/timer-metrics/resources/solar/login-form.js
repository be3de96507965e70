// payloadGenerator of inverter-login (scripted-auth, authentication context): the OAuth client-credentials
// form. The client id and secret are the restricted `data` of the authentication host in the bootstrap (a
// `-2/` secret there is decrypted at this call); the scope comes from the caller's AGENT_AUTH_DATA.
const idp = JSON.parse(context.getRestrictedDataFromHost('inverter-idp'));
const auth = JSON.parse(context.getProperty('AGENT_AUTH_DATA') || '{}');
const form = [
  ['grant_type', 'client_credentials'],
  ['client_id', idp.clientId],
  ['client_secret', idp.clientSecret],
  ['scope', auth.scope || 'production:read'],
];
context.setHeader('Content-Type', 'application/x-www-form-urlencoded');
context.setBody(form.map(([k, v]) => k + '=' + encodeURIComponent(v)).join('&'));
