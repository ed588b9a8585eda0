/**
 * Serves a chat-like SSE stream on 127.0.0.1 and prints each event as it arrives, decoded by @ai4ts/sse.
 * Run: npx tsx examples/sse-demo.ts
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { encodeSse, parseSse } from '@ai4ts/sse';

const tokens = ['Server', '-sent', ' events', ' arrive', ' one', ' by', ' one', ' — ', 'même', ' en', ' UTF-8', ' 🚀'];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const server = createServer(async (_req, res) => {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  res.write(encodeSse({ comment: 'a chat-like stream', retry: 1000, data: '{"role":"assistant"}' }));
  for (const [i, token] of tokens.entries()) {
    await sleep(60);
    res.write(encodeSse({ id: String(i + 1), data: JSON.stringify({ delta: token }) }));
  }
  res.end(encodeSse({ event: 'done', data: '[DONE]' }));
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/chat`;
console.log(`Streaming from ${url}\n`);

const started = Date.now();
let text = '';
const events = parseSse(await fetch(url));
for await (const event of events) {
  const at = `${String(Date.now() - started).padStart(4)} ms`;
  console.log(`${at}  event=${event.event.padEnd(7)} id=${(event.id ?? '-').padEnd(2)} data=${event.data}`);
  if (event.event === 'message' && event.id) text += (JSON.parse(event.data) as { delta: string }).delta;
}
console.log(`\nText: ${text}`);
console.log(`Ended inside an event: ${events.incomplete}`);
server.close();
