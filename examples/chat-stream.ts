/**
 * Streams a chat completion and prints reasoning and text as they arrive.
 *
 * Self-contained: it starts a tiny OpenAI-compatible server on 127.0.0.1 that streams a scripted answer with
 * reasoning (the way DeepSeek sends `reasoning_content`), then talks to it through ChatService.
 *
 *   npx tsx examples/chat-stream.ts
 */
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ChatService } from '@ai4ts/chat';
import { Transport } from '@ai4ts/core';

const script = [
  { reasoning_content: 'The user wants a haiku ' },
  { reasoning_content: 'about streams. Five, seven, five.' },
  { content: 'Bytes drift down the wire,\n' },
  { content: 'each delta a small river —\n' },
  { content: 'the sea is the whole.' },
];

const server = createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const base = { id: 'chatcmpl-demo', object: 'chat.completion.chunk', created: 1700000000, model: 'demo' };
  const send = (body: unknown) => res.write(`data: ${JSON.stringify(body)}\n\n`);
  let step = 0;
  const timer = setInterval(() => {
    const delta = script[step++];
    if (delta) return send({ ...base, choices: [{ index: 0, delta, finish_reason: null }] });
    clearInterval(timer);
    send({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] });
    send({ ...base, choices: [], usage: { prompt_tokens: 12, completion_tokens: 31, total_tokens: 43 } });
    res.end('data: [DONE]\n\n');
  }, 80);
});
server.listen(0, '127.0.0.1');
await once(server, 'listening');
const { port } = server.address() as AddressInfo;

const chat = new ChatService(new Transport({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: 'local-demo' }));
const stream = chat.stream({ model: 'demo', messages: [{ role: 'user', content: 'A haiku about streams, please.' }] });

let section = '';
for await (const event of stream) {
  if (event.type !== 'reasoning' && event.type !== 'content') continue;
  if (section !== event.type) {
    section = event.type;
    process.stdout.write(`\n[${section}] `);
  }
  process.stdout.write(event.delta);
}

const completion = await stream.final();
console.log(`\n\nfinish_reason: ${completion.choices[0]?.finish_reason}, usage: ${JSON.stringify(completion.usage)}`);
server.close();
