// The baseline: a bare Express 5 app with one constant endpoint, on a loopback port chosen by the OS.
import type { AddressInfo } from 'node:net';
import express from 'express';

const app: express.Express = express();
app.get('/bare', (_req, res) => {
  res.json({ ok: true });
});
const server = app.listen(0, '127.0.0.1', () => {
  process.stdout.write(
    JSON.stringify({ msg: 'listening', port: (server.address() as AddressInfo).port }) + '\n',
  );
});
process.once('SIGTERM', () => server.close(() => process.exit(0)));
