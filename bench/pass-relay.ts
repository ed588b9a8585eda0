/**
 * The gateway bench's floor: a relay on node:http that passes the bytes through. Each request is sent to the same
 * path of the upstream over a keep-alive connection and the answer piped back, status and content type kept; no
 * parsing, no translation, no bookkeeping. Run as its own process by gateway.bench.ts:
 * `node --import tsx bench/pass-relay.ts <upstream url>`; prints `listening on http://HOST:PORT` first.
 */
import { Agent, createServer, request } from 'node:http';

const upstream = process.argv[2];
if (!upstream) throw new Error('usage: pass-relay.ts <upstream url>');
const agent = new Agent({ keepAlive: true, maxSockets: 512 });

const server = createServer((req, res) => {
  const forward = request(
    `${upstream}${req.url ?? '/'}`,
    { method: req.method, agent, headers: { 'content-type': req.headers['content-type'] ?? 'application/json' } },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, { 'content-type': answer.headers['content-type'] ?? 'application/octet-stream' });
      answer.pipe(res);
    },
  );
  forward.on('error', () => res.destroy());
  req.pipe(forward);
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  if (address && typeof address === 'object') console.log(`listening on http://127.0.0.1:${address.port}`);
});
