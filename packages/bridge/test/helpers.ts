/** Test helpers: a scripted daemon on 127.0.0.1, SSE framing for both dialects, and readers for results. */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { BridgeEvent } from '@ai4ts/bridge';

/** One `data:` block of the typed-event dialect. */
export const typed = (event: Record<string, unknown>): string => `data: ${JSON.stringify(event)}\n\n`;

/** One block of the named-event dialect. */
export const named = (event: string, data: unknown): string => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

/** A whole typed-dialect answer: reasoning, a daemon-run tool round, text over two rounds, usage per round, done. */
export const TYPED_ANSWER = [
  typed({ type: 'reasoning', content: 'Let me ' }),
  typed({ type: 'reasoning', content: 'check.' }),
  typed({ type: 'tool_start', id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' }),
  typed({ type: 'tool_result', id: 'call_1', name: 'get_weather', output: '18C', success: true, duration_ms: 42 }),
  typed({ type: 'tokens', prompt: 10, completion: 5, total: 15 }),
  typed({ type: 'reasoning', content: ' Now answer.' }),
  typed({ type: 'text', content: 'It is ' }),
  typed({ type: 'text', content: '18C in Paris.' }),
  typed({ type: 'tokens', prompt: 20, completion: 7, total: 27 }),
  typed({
    type: 'done',
    tokens: { prompt: 30, completion: 12, total: 42 },
    tool_calls: 1,
    session_id: 'daemon-session',
  }),
].join('');

/** A whole named-dialect answer. */
export const NAMED_ANSWER = [
  named('start', { message_id: 'm-1' }),
  named('message', { content: 'Hello' }),
  named('message', { content: ', world' }),
  named('done', { message_id: 'm-1' }),
].join('');

/** A body as a ReadableStream cut into the given pieces. */
export function streamOf(pieces: Array<string | Uint8Array>): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let i = 0;
  return new ReadableStream({
    pull(controller) {
      const piece = pieces[i++];
      if (piece === undefined) controller.close();
      else controller.enqueue(typeof piece === 'string' ? encoder.encode(piece) : piece);
    },
  });
}

/** Collects every event of a reader, or the error it threw. */
export async function drain(events: AsyncIterable<BridgeEvent>): Promise<{ events: BridgeEvent[]; error?: unknown }> {
  const out: BridgeEvent[] = [];
  try {
    for await (const event of events) out.push(event);
    return { events: out };
  } catch (error) {
    return { events: out, error };
  }
}

export interface DaemonRequest {
  method: string | undefined;
  url: string | undefined;
  headers: IncomingMessage['headers'];
  body: unknown;
}

export interface Daemon {
  url: string;
  requests: DaemonRequest[];
  /** Resolves when a request's connection closed before the daemon ended its response. */
  cut: Promise<void>;
  close(): Promise<void>;
}

/** A scripted daemon on 127.0.0.1, port 0. `script` answers each request (the body is already read as JSON). */
export async function startDaemon(
  script: (res: ServerResponse, request: DaemonRequest) => void | Promise<void>,
): Promise<Daemon> {
  const requests: DaemonRequest[] = [];
  let onCut!: () => void;
  const cut = new Promise<void>((resolve) => {
    onCut = resolve;
  });
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const request = {
        method: req.method,
        url: req.url,
        headers: req.headers,
        body: text ? JSON.parse(text) : undefined,
      };
      requests.push(request);
      res.on('close', () => {
        if (!res.writableFinished) onCut();
      });
      void script(res, request);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/chat`,
    requests,
    cut,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Answers with SSE headers and the given text, then ends. */
export function sse(res: ServerResponse, body: string): void {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.end(body);
}

/** Splits an SSE response body into its `data:` payloads (one per block), comments left out. */
export function dataLines(body: string): string[] {
  return body
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) =>
      block
        .split('\n')
        .filter((line) => line.startsWith('data: '))
        .map((line) => line.slice(6))
        .join('\n'),
    )
    .filter((data) => data !== '');
}

/** The body reader of a response that must have a body. */
export function readerOf(response: Response): ReadableStreamDefaultReader<Uint8Array> {
  if (!response.body) throw new Error('The response has no body');
  return response.body.getReader();
}

/** One OpenAI chunk as the tests read it. */
export interface Chunk {
  id?: string;
  model?: string;
  choices?: Array<{
    delta: {
      role?: string;
      content?: string;
      reasoning_content?: string;
      tool_calls?: unknown;
      daemon_tools?: unknown;
    };
    finish_reason: string | null;
  }>;
  usage?: unknown;
  session_id?: string;
  error?: { message: string; type: string; param: string | null; code: string | null };
}

/** An OpenAI SSE body read back: its chunks, whether it ended with `[DONE]`, and the text and reasoning. */
export function readChunks(body: string): { chunks: Chunk[]; done: boolean; text: string; reasoning: string } {
  const lines = dataLines(body);
  const done = lines.at(-1) === '[DONE]';
  const chunks = lines.filter((d) => d !== '[DONE]').map((d) => JSON.parse(d) as Chunk);
  const join = (key: 'content' | 'reasoning_content') => chunks.map((c) => c.choices?.[0]?.delta[key] ?? '').join('');
  return { chunks, done, text: join('content'), reasoning: join('reasoning_content') };
}
