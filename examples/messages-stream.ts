/**
 * Streams an Anthropic Messages answer and prints it live: thinking, text, then a tool call.
 *
 * Runs offline: it starts its own server on 127.0.0.1 that plays a scripted Messages stream the way the API
 * frames it (named SSE events, ping, a signature_delta, tool input split mid-string), then exits.
 *
 *   npx tsx examples/messages-stream.ts
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Transport } from '@ai4ts/core';
import { MessagesService, toChatCompletion } from '@ai4ts/messages';

const script: Array<Record<string, unknown>> = [
  {
    type: 'message_start',
    message: {
      id: 'msg_demo',
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-4-5',
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 412, output_tokens: 1, cache_read_input_tokens: 128 },
    },
  },
  { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } },
  { type: 'ping' },
  ...['The user asks about ', 'Paris weather; ', 'I should call the tool.'].map((thinking) => ({
    type: 'content_block_delta',
    index: 0,
    delta: { type: 'thinking_delta', thinking },
  })),
  { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'EqQBCkgIARABGAIiQL2' } },
  { type: 'content_block_stop', index: 0 },
  { type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } },
  ...['Let me ', 'check the ', 'forecast.'].map((text) => ({
    type: 'content_block_delta',
    index: 1,
    delta: { type: 'text_delta', text },
  })),
  { type: 'content_block_stop', index: 1 },
  {
    type: 'content_block_start',
    index: 2,
    content_block: { type: 'tool_use', id: 'toolu_demo', name: 'get_weather', input: {} },
  },
  ...['', '{"city": "Par', 'is", "unit": ', '"celsius"}'].map((partial_json) => ({
    type: 'content_block_delta',
    index: 2,
    delta: { type: 'input_json_delta', partial_json },
  })),
  { type: 'content_block_stop', index: 2 },
  { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 74 } },
  { type: 'message_stop' },
];

const server = createServer(async (req, res) => {
  req.resume();
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const event of script) {
    res.write(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
    await new Promise((resolve) => setTimeout(resolve, 40));
  }
  res.end();
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const { port } = server.address() as AddressInfo;

const messages = new MessagesService(
  new Transport({ provider: 'anthropic', apiKey: 'demo-key', baseURL: `http://127.0.0.1:${port}/v1` }),
);
const stream = messages.stream({
  model: 'claude-sonnet-4-5',
  max_tokens: 1024,
  thinking: { type: 'enabled', budget_tokens: 1024 },
  tools: [{ name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }],
  messages: [{ role: 'user', content: 'What is the weather in Paris?' }],
});

let last = '';
const section = (name: string) => {
  if (last !== name) process.stdout.write(`${last ? '\n' : ''}[${name}] `);
  last = name;
};
for await (const event of stream) {
  if (event.type === 'reasoning') {
    section('thinking');
    process.stdout.write(event.delta);
  } else if (event.type === 'content') {
    section('text');
    process.stdout.write(event.delta);
  } else if (event.type === 'tool_call.start') {
    section(`tool ${event.name}`);
  } else if (event.type === 'tool_call.delta') {
    process.stdout.write(event.delta);
  } else if (event.type === 'finish') {
    process.stdout.write(`\n[finish] ${event.finishReason}\n`);
  }
}

const message = await stream.final();
console.log('tool uses:', JSON.stringify(stream.listener.toolUses.map(({ name, input }) => ({ name, input }))));
console.log('signature kept:', message.content[0]?.type === 'thinking' && 'signature' in message.content[0]);
console.log('chat usage:', JSON.stringify(toChatCompletion(message).usage));
server.close();
