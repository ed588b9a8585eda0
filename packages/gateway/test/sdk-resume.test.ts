/**
 * The SDK's own stream reading resumes a gateway's resumable stream: ai4ts's Chat Completions, Responses and Messages
 * clients read through a TCP relay that cuts their sockets at seeded random points, in front of a `--resumable`
 * gateway and a scripted upstream. The result equals the same stream read whole; a retry budget that runs out is a
 * ConnectionError with the partial; without resumability a cut stays a cut.
 */
import { createServer, type Server, type Socket, connect } from 'node:net';
import { type GatewayProtocol, type ListeningGateway, listenGateway } from '@ai4ts/gateway';
import { ChatService, collectChatCompletion } from '@ai4ts/chat';
import { ApiError, ConnectionError, resultInfo, Transport } from '@ai4ts/core';
import { collectMessage, MessagesService } from '@ai4ts/messages';
import { collectResponse, ResponsesService } from '@ai4ts/responses';
import { type MockModel, startMockModel } from '@ai4ts/testing';
import { seededRandom } from '@ai4ts/test-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ANSWER = 'The quick brown fox jumps over the lazy dog, then naps; résumé 用户 🦊. '.repeat(4);
const REASONING = 'A fox, a dog, a nap: tell it in order.';
const USAGE = { prompt_tokens: 12, completion_tokens: 80, total_tokens: 92 };
const TOOL_CALLS = [
  { id: 'call_a', name: 'lookup', arguments: { animal: 'fox' } },
  { id: 'call_b', name: 'lookup', arguments: { animal: 'dog' } },
];
const PROTOCOLS: GatewayProtocol[] = ['chat', 'responses', 'messages'];

/**
 * A TCP relay to `target` whose n-th connection is cut (ended mid-body: for chunked HTTP, a broken body) after
 * `cuts[n]` bytes of its response body; connections past the list are relayed whole.
 */
async function startCutter(target: URL, cuts: readonly number[]) {
  const sockets = new Set<Socket>();
  let connections = 0;
  const server: Server = createServer((client) => {
    const budget = cuts[connections++] ?? Number.POSITIVE_INFINITY;
    const upstream = connect(Number(target.port), target.hostname);
    sockets.add(client).add(upstream);
    client.on('close', () => sockets.delete(client));
    upstream.on('close', () => sockets.delete(upstream));
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    client.pipe(upstream);
    let head = '';
    let body = -1;
    upstream.on('data', (chunk: Buffer) => {
      if (body < 0) {
        head += chunk.toString('latin1');
        const end = head.indexOf('\r\n\r\n');
        if (end < 0) return void client.write(chunk);
        body = 0;
        const headBytes = chunk.length - (head.length - end - 4);
        client.write(chunk.subarray(0, headBytes));
        chunk = chunk.subarray(headBytes);
      }
      const room = budget - body;
      if (chunk.length < room) {
        body += chunk.length;
        return void client.write(chunk);
      }
      client.end(chunk.subarray(0, Math.max(0, room)));
      upstream.destroy();
    });
    upstream.on('end', () => client.end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return {
    url: `http://127.0.0.1:${address.port}`,
    get connections() {
      return connections;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

const gateways = new Map<string, ListeningGateway>();
let model: MockModel;

beforeAll(async () => {
  model = await startMockModel({
    script: (body) =>
      JSON.stringify(body).includes('please fail')
        ? { content: 'Partial answer', streamError: { message: 'model overloaded', code: 'server_error' } }
        : { reasoning: REASONING, content: ANSWER, toolCalls: TOOL_CALLS, usage: USAGE, chunkDelayMs: 1 },
  });
  for (const protocol of PROTOCOLS)
    for (const resumable of [true, false])
      gateways.set(
        `${protocol}:${resumable}`,
        await listenGateway({ upstream: model.baseURL, upstreamProtocol: protocol, auth: 'sk-gateway', resumable }),
      );
});

afterAll(async () => {
  for (const gateway of gateways.values()) await gateway.close();
  await model.close();
});

function gatewayOf(protocol: GatewayProtocol, resumable = true): ListeningGateway {
  const gateway = gateways.get(`${protocol}:${resumable}`);
  if (!gateway) throw new Error(`no ${protocol} gateway`);
  return gateway;
}

/** ai4ts's own client of `protocol` at `url`, streaming one request: the handle and how to read its stream whole. */
function client(protocol: GatewayProtocol, url: string, prompt = 'Tell me about the fox', maxRetries = 3) {
  // The Anthropic preset authenticates with x-api-key, the others with a bearer token: the gateway takes both.
  const transport = new Transport({
    provider: protocol === 'messages' ? 'anthropic' : 'openai',
    baseURL: `${url}/v1`,
    apiKey: 'sk-gateway',
    maxRetries,
    backoff: { initialMs: 1, maxMs: 4 },
  });
  const tools = [{ type: 'function' as const, function: { name: 'lookup', parameters: { type: 'object' } } }];
  if (protocol === 'chat') {
    const stream = new ChatService(transport).stream({ model: 'm', messages: [{ role: 'user', content: prompt }], tools });
    return { stream, collect: (response: Response) => collectChatCompletion(response) };
  }
  if (protocol === 'responses') {
    const stream = new ResponsesService(transport).stream({
      model: 'm',
      input: prompt,
      tools: [{ type: 'function', name: 'lookup', parameters: { type: 'object' } }],
    });
    return { stream, collect: (response: Response) => collectResponse(response) };
  }
  const stream = new MessagesService(transport).stream({
    model: 'm',
    max_tokens: 1024,
    messages: [{ role: 'user', content: prompt }],
    tools: [{ name: 'lookup', input_schema: { type: 'object' } }],
  });
  return { stream, collect: (response: Response) => collectMessage(response) };
}

/** The stream as the gateway keeps it, read whole from its first event. */
async function readWhole(protocol: GatewayProtocol, streamId: string) {
  const response = await fetch(`${gatewayOf(protocol).url}/v1/streams/${streamId}`, {
    headers: { authorization: 'Bearer sk-gateway' },
  });
  expect(response.status).toBe(200);
  return client(protocol, gatewayOf(protocol).url).collect(response);
}

/** The ConnectionError `final` rejects with; anything else fails the test. */
async function connectionFailure(final: Promise<unknown>): Promise<ConnectionError> {
  const error = await final.then(
    () => undefined,
    (failure: unknown) => failure,
  );
  if (!(error instanceof ConnectionError)) throw new Error(`Expected a ConnectionError, got ${String(error)}`);
  return error;
}

describe.each(PROTOCOLS)('ai4ts %s client through a resumable gateway', { timeout: 30_000 }, (protocol) => {
  it('a socket cut at random points resumes: the result equals the stream read whole', async () => {
    const random = seededRandom(PROTOCOLS.indexOf(protocol) + 21);
    for (let run = 0; run < 6; run++) {
      // Up to three cuts a run, anywhere in the first ~2 KB of each body (0: right after the headers).
      const cuts = Array.from({ length: 1 + Math.floor(random() * 3) }, () => Math.floor(random() * 2000));
      const cutter = await startCutter(new URL(gatewayOf(protocol).url), cuts);
      try {
        const { stream } = client(protocol, cutter.url);
        const final = await stream.final();
        const info = resultInfo(final);
        const streamId = info?.headers.get('x-ai4ts-stream-id') ?? '';
        expect(await readWhole(protocol, streamId)).toEqual(final);
        // A later cut lands only if the rest of the stream is longer than its budget.
        expect(cutter.connections).toBeGreaterThan(1);
        expect(info?.resumes).toBe(cutter.connections - 1);
        expect(JSON.stringify(final)).toContain(JSON.stringify(ANSWER).slice(1, -1));
      } finally {
        await cutter.close();
      }
    }
  });

  it('a retry budget that runs out is a ConnectionError holding what arrived', async () => {
    // The first body is cut after 1500 bytes, each of the 2 reconnections right after its headers.
    const cutter = await startCutter(new URL(gatewayOf(protocol).url), [1500, 0, 0]);
    try {
      const { stream } = client(protocol, cutter.url, 'Tell me about the fox', 2);
      const error = await connectionFailure(stream.final());
      expect(error.message).toMatch(/could not be resumed/);
      expect(error.partial).toBeDefined();
      expect(cutter.connections).toBe(3);
    } finally {
      await cutter.close();
    }
  });

  it('without resumability a cut is a ConnectionError with the partial, and nothing reconnects', async () => {
    const cutter = await startCutter(new URL(gatewayOf(protocol, false).url), [1500]);
    try {
      const { stream } = client(protocol, cutter.url);
      const error = await connectionFailure(stream.final());
      expect(error.message).not.toMatch(/could not be resumed/);
      expect(error.partial).toBeDefined();
      expect(cutter.connections).toBe(1);
    } finally {
      await cutter.close();
    }
  });

  it('an in-stream error is not a cut: it fails the stream without reconnecting', async () => {
    const cutter = await startCutter(new URL(gatewayOf(protocol).url), []);
    try {
      const { stream } = client(protocol, cutter.url, 'please fail');
      await expect(stream.final()).rejects.toBeInstanceOf(ApiError);
      expect(cutter.connections).toBe(1);
    } finally {
      await cutter.close();
    }
  });
});
