/**
 * Streams an OpenAI Responses answer and prints it live: a reasoning summary, the answer text, then a function call.
 *
 * Runs offline: it starts its own server on 127.0.0.1 that plays a scripted Responses stream the way the API frames
 * it (named SSE events, `sequence_number` on each, argument deltas of a function call), then exits.
 *
 *   npx tsx examples/responses-stream.ts
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Transport } from '@ai4ts/core';
import { ResponsesService } from '@ai4ts/responses';

const response = { id: 'resp_demo', object: 'response', created_at: 1_741_476_542, model: 'gpt-5', output: [] };
const reasoning = { id: 'rs_demo', output_index: 0, summary_index: 0, item_id: 'rs_demo' };
const message = { item_id: 'msg_demo', output_index: 1, content_index: 0 };
const call = { item_id: 'fc_demo', output_index: 2 };
const summary = ['The user wants ', 'the weather in Paris: ', 'I will call get_weather.'];
const text = ['Let me ', 'check the ', 'forecast for Paris.'];
const args = ['{"city":', '"Paris",', '"unit":"celsius"}'];

const script: Record<string, unknown>[] = [
  { type: 'response.created', response: { ...response, status: 'in_progress' } },
  { type: 'response.output_item.added', output_index: 0, item: { id: 'rs_demo', type: 'reasoning', summary: [] } },
  { type: 'response.reasoning_summary_part.added', ...reasoning, part: { type: 'summary_text', text: '' } },
  ...summary.map((delta) => ({ type: 'response.reasoning_summary_text.delta', ...reasoning, delta })),
  { type: 'response.reasoning_summary_text.done', ...reasoning, text: summary.join('') },
  {
    type: 'response.output_item.added',
    output_index: 1,
    item: { id: 'msg_demo', type: 'message', status: 'in_progress', role: 'assistant', content: [] },
  },
  { type: 'response.content_part.added', ...message, part: { type: 'output_text', text: '', annotations: [] } },
  ...text.map((delta) => ({ type: 'response.output_text.delta', ...message, delta, logprobs: [] })),
  { type: 'response.output_text.done', ...message, text: text.join(''), logprobs: [] },
  {
    type: 'response.output_item.added',
    output_index: 2,
    item: { id: 'fc_demo', type: 'function_call', status: 'in_progress', call_id: 'call_demo', name: 'get_weather', arguments: '' },
  },
  ...args.map((delta) => ({ type: 'response.function_call_arguments.delta', ...call, delta })),
  { type: 'response.function_call_arguments.done', ...call, name: 'get_weather', arguments: args.join('') },
  {
    type: 'response.completed',
    response: {
      ...response,
      status: 'completed',
      usage: {
        input_tokens: 412,
        input_tokens_details: { cached_tokens: 128 },
        output_tokens: 74,
        output_tokens_details: { reasoning_tokens: 32 },
        total_tokens: 486,
      },
    },
  },
].map((event, sequence_number) => ({ ...event, sequence_number }));

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

const responses = new ResponsesService(new Transport({ apiKey: 'demo-key', baseURL: `http://127.0.0.1:${port}/v1` }));
const stream = responses.stream({
  model: 'gpt-5',
  input: 'What is the weather in Paris?',
  reasoning: { summary: 'auto' },
  tools: [{ type: 'function', name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } }],
});

let section = '';
const heading = (name: string) => {
  if (section !== name) process.stdout.write(`${section ? '\n' : ''}[${name}] `);
  section = name;
};
for await (const event of stream) {
  if (event.type === 'reasoning') {
    heading('reasoning');
    process.stdout.write(event.delta);
  } else if (event.type === 'content') {
    heading('answer');
    process.stdout.write(event.delta);
  } else if (event.type === 'tool_call.start') {
    heading(`call ${event.name}`);
  } else if (event.type === 'tool_call.delta') {
    process.stdout.write(event.delta);
  } else if (event.type === 'finish') {
    process.stdout.write(`\n[finish] ${event.finishReason}\n`);
  }
}

const final = await stream.final();
const calls = stream.listener.functionCalls;
console.log(`status: ${final.status}, output items: ${final.output.map((item) => item.type).join(', ')}`);
console.log(`function calls by call_id: ${JSON.stringify(Object.fromEntries(Object.entries(calls).map(([id, c]) => [id, c.arguments])))}`);
console.log(`usage: ${JSON.stringify(final.usage)}`);
console.log(`trace: ${stream.listener.events.length} events, last: ${(stream.listener.lastEvent as { type: string }).type}`);
server.close();
