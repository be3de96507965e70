// The start-time baseline of bench/run.ts: a bare node:http server answering GET /health with {"ok":true} on
// 127.0.0.1:$PORT, started with plain `node` like the two packager front-ends.
import { createServer } from 'node:http';

const body = '{"ok":true}';
createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length });
  res.end(body);
}).listen(Number(process.env.PORT), '127.0.0.1');
process.once('SIGTERM', () => process.exit(0));
