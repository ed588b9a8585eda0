/**
 * The gateway bench's upstream: canned answers on node:http, pre-rendered so that the upstream costs the same for
 * every contender. `POST /v1/chat/completions` and `POST /v1/messages`: with `"stream": true` an SSE answer of
 * {@link EVENTS} text events (and usage, and the protocol's end), else a ~1 KB JSON answer. Run as its own process
 * by gateway.bench.ts: `node --import tsx bench/gateway-upstream.ts`; prints `listening on http://HOST:PORT` first.
 */
import { createServer } from 'node:http';

export const EVENTS = 200;
const WORD = 'token ';
const TEXT = 'The quick brown fox jumps over the lazy dog. '.repeat(22); // ~1 KB

const chatChunk = (delta: string, finish: string | null) =>
  `data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":0,"model":"bench","choices":[{"index":0,"delta":${delta},"finish_reason":${finish === null ? 'null' : `"${finish}"`}}]}\n\n`;

const CHAT_STREAM = Buffer.from(
  chatChunk('{"role":"assistant","content":""}', null) +
    chatChunk(JSON.stringify({ content: WORD }), null).repeat(EVENTS) +
    chatChunk('{}', 'stop') +
    'data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":0,"model":"bench","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":200,"total_tokens":212}}\n\n' +
    'data: [DONE]\n\n',
);

const CHAT_JSON = Buffer.from(
  JSON.stringify({
    id: 'chatcmpl-bench',
    object: 'chat.completion',
    created: 0,
    model: 'bench',
    choices: [{ index: 0, message: { role: 'assistant', content: TEXT }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 12, completion_tokens: 240, total_tokens: 252 },
  }),
);

const sse = (event: string, data: unknown) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
const MESSAGES_STREAM = Buffer.from(
  sse('message_start', {
    type: 'message_start',
    message: { id: 'msg_bench', type: 'message', role: 'assistant', model: 'bench', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 12, output_tokens: 1 } },
  }) +
    sse('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }) +
    sse('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: WORD } }).repeat(EVENTS) +
    sse('content_block_stop', { type: 'content_block_stop', index: 0 }) +
    sse('message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 200 } }) +
    sse('message_stop', { type: 'message_stop' }),
);

const MESSAGES_JSON = Buffer.from(
  JSON.stringify({
    id: 'msg_bench',
    type: 'message',
    role: 'assistant',
    model: 'bench',
    content: [{ type: 'text', text: TEXT }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 12, output_tokens: 240 },
  }),
);

const ANSWERS: Record<string, { stream: Buffer; json: Buffer }> = {
  '/v1/chat/completions': { stream: CHAT_STREAM, json: CHAT_JSON },
  '/v1/messages': { stream: MESSAGES_STREAM, json: MESSAGES_JSON },
};

const server = createServer((req, res) => {
  const parts: Buffer[] = [];
  req.on('data', (chunk: Buffer) => parts.push(chunk));
  req.on('end', () => {
    const answer = ANSWERS[req.url ?? ''];
    if (!answer) {
      res.writeHead(404).end();
      return;
    }
    // A cheap look for the flag, as the canned answers need nothing else of the body.
    const stream = Buffer.concat(parts).includes('"stream":true');
    res.writeHead(200, { 'content-type': stream ? 'text/event-stream' : 'application/json' });
    res.end(stream ? answer.stream : answer.json);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  if (address && typeof address === 'object') console.log(`listening on http://127.0.0.1:${address.port}`);
});
