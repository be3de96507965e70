doc
  .description('Formats an amount in minor units as a decimal string.')
  .run(() => {
    const data = JSON.parse(context.getData());
    const minor = Number(JSON.parse(context.getBody()).amountMinor);
    context.setBody(JSON.stringify({ amount: (minor / 100).toFixed(2), currency: data.currency }));
  });
