// The HTTP body part arrives as a string; keep it as the step body.
const body = context.getBody();
context.setBody(body === null ? '' : body);
