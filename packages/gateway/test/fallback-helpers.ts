/** Provider upstreams for the fallback tests: node:http servers on 127.0.0.1 that answer from a script. */
import type { ServerResponse } from 'node:http';
import { type GatewayOptions, type ListeningGateway, listenGateway } from '@ai4ts/gateway';
import { sendSse, serve, sseFrame, sseText, startSse } from '@ai4ts/test-kit';
import { afterEach } from 'vitest';

export type Answer = (res: ServerResponse) => void | Promise<void>;

export interface Upstream {
  /** Its API root, `http://127.0.0.1:PORT/v1`. */
  root: string;
  /** Its name as the gateway gives it by default: `chat@127.0.0.1:PORT`. */
  host: string;
  /** The body of each request it received. */
  bodies: Record<string, unknown>[];
  close(): Promise<void>;
}

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const server of open.splice(0).reverse()) await server.close();
});

/** An upstream that answers each request with `answer(n)` (n from 1); closed after the test. */
export async function upstreamOf(answer: (n: number) => Answer): Promise<Upstream> {
  const bodies: Record<string, unknown>[] = [];
  const server = await serve((_req, res, n) => {
    bodies.push(JSON.parse(server.bodies[n - 1] ?? '{}') as Record<string, unknown>);
    void answer(n)(res);
  });
  open.push(server);
  return { root: server.baseURL, host: new URL(server.baseURL).host, bodies, close: server.close };
}

/** A URL where nothing listens: a server started and closed, so that its port refuses connections. */
export async function refusingRoot(): Promise<string> {
  const server = await serve((_req, res) => res.end());
  await server.close();
  return server.baseURL;
}

export async function gatewayOf(options: GatewayOptions): Promise<ListeningGateway> {
  const gateway = await listenGateway(options);
  open.push(gateway);
  return gateway;
}

/** One Chat Completions chunk of choice 0. */
export const chunk = (delta: unknown, finish: string | null) => ({
  id: 'c1',
  object: 'chat.completion.chunk',
  created: 0,
  model: 'm',
  choices: [{ index: 0, delta, finish_reason: finish }],
});

/** A Chat Completions stream answering `text`. */
export const chatAnswer =
  (text: string): Answer =>
  (res) => {
    sendSse(res, sseText([chunk({ role: 'assistant', content: text }, null), chunk({}, 'stop'), '[DONE]']));
  };

/** A Messages stream answering `text`. */
export const messagesAnswer =
  (text: string): Answer =>
  (res) => {
    sendSse(
      res,
      sseText(
        [
          {
            type: 'message_start',
            message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'm', content: [], stop_reason: null, usage: { input_tokens: 3, output_tokens: 0 } },
          },
          { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
          { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } },
          { type: 'content_block_stop', index: 0 },
          { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 2 } },
          { type: 'message_stop' },
        ],
        { named: true },
      ),
    );
  };

/** An error status with a JSON body. */
export const status =
  (code: number, body: unknown = { error: { message: `status ${code}` } }, headers: Record<string, string> = {}): Answer =>
  (res) => {
    res.writeHead(code, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };

/** A Chat stream that sends its headers and then nothing until `release` resolves, then answers `text`. */
export const heldAnswer =
  (text: string, release: Promise<void>): Answer =>
  async (res) => {
    startSse(res);
    await release;
    if (res.destroyed) return;
    res.end(sseText([chunk({ role: 'assistant', content: text }, null), chunk({}, 'stop'), '[DONE]']));
  };

/** A Chat stream that sends its first chunk, then breaks its connection: output started, the answer is cut. */
export const cutAnswer =
  (text: string): Answer =>
  (res) => {
    startSse(res);
    res.write(sseFrame(chunk({ role: 'assistant', content: text }, null)));
    setTimeout(() => res.destroy(), 20);
  };

/** No retries of one upstream (the fallback is what is tested), and quick ones where a test wants them. */
export const NO_RETRY = { maxRetries: 0 };

/** A Chat Completions request, streamed or not. */
export function askChat(gateway: ListeningGateway, stream = false, model = 'm'): Promise<Response> {
  return fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model, stream, messages: [{ role: 'user', content: 'Hi' }] }),
  });
}

/** The text of a non-streamed Chat answer. */
export async function chatText(response: Response): Promise<string | undefined> {
  const body = (await response.json()) as { choices?: Array<{ message: { content: string } }> };
  return body.choices?.[0]?.message.content;
}
