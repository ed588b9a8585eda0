/**
 * The proxy bench's floor: a relay on node:http that does only what no proxy can skip. For each client request it
 * POSTs to the daemon, splits the daemon's typed-dialect stream on blank lines, parses each event's JSON and writes
 * the OpenAI chunk of a `text` event; `done` ends the answer with a `stop` chunk and `[DONE]`. No validation, no
 * usage, no timeouts, no secrets, no bookkeeping. Run as its own process by proxy.bench.ts:
 * `node --import tsx bench/relay.ts <daemon url>`; prints `listening on http://HOST:PORT` first.
 */
import { createServer, request } from 'node:http';
import { FloorSplitter } from './input.ts';

const upstream = process.argv[2];
if (!upstream) throw new Error('usage: relay.ts <daemon url>');

const HEAD = '{"id":"chatcmpl-relay","object":"chat.completion.chunk","created":0,"model":"daemon","choices":[{"index":0,"delta":';

const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    const daemon = request(upstream, { method: 'POST', headers: { 'content-type': 'application/json' } }, (answer) => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      const splitter = new FloorSplitter('\n\n', (data) => {
        const event = JSON.parse(data) as { type: string; content?: string };
        if (event.type === 'text') res.write(`data: ${HEAD}{"content":${JSON.stringify(event.content)}},"finish_reason":null}]}\n\n`);
        else if (event.type === 'done') res.end(`data: ${HEAD}{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n`);
      });
      answer.on('data', (chunk: Buffer) => splitter.feed(chunk));
    });
    daemon.end('{"message":"hi"}');
  });
});
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  if (address && typeof address === 'object') console.log(`listening on http://127.0.0.1:${address.port}`);
});
