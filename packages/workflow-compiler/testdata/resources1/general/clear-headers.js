// Removes every outbound header before a call is prepared.
context.removeAllHeaders();
