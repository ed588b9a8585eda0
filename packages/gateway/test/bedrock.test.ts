/**
 * Bedrock as a gateway upstream: a Chat Completions client reaches Claude on a (local, node:http) Bedrock, signed
 * with SigV4, its invoke-with-response-stream frames (made by @smithy/eventstream-codec) read by the Messages codec,
 * an in-stream exception before the first event retried, and no AWS secret in any answer.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { bedrock } from '@ai4ts/core/bedrock';
import { type ListeningGateway, listenGateway } from '@ai4ts/gateway';
import { bedrockEventFrame, bedrockExceptionFrame, concatBytes, serve, type TestServer } from '@ai4ts/test-kit';
import { afterEach, describe, expect, it } from 'vitest';

const ACCESS_KEY_ID = 'AKIAIOSFODNN7EXAMPLE';
const SECRET = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYSECRETKEY';
const SESSION_TOKEN = 'FQoGZXIvYXdzEXAMPLESESSIONTOKENgateway42';
const MODEL = 'anthropic.claude-3-5-haiku-20241022-v1:0';

const events = (text: string) => [
  {
    type: 'message_start',
    message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude', content: [], stop_reason: null, usage: { input_tokens: 3, output_tokens: 0 } },
  },
  { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
  { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } },
  { type: 'content_block_stop', index: 0 },
  { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 2 } },
  { type: 'message_stop' },
];
const frames = (text: string) =>
  concatBytes(events(text).map((event) => bedrockEventFrame('chunk', { bytes: Buffer.from(JSON.stringify(event)).toString('base64') })));

interface Seen {
  url: string | undefined;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
}

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const server of open.splice(0).reverse()) await server.close();
});

/** A Bedrock that answers request n with `answer(n)`'s bytes as an event stream. */
async function bedrockOf(answer: (n: number) => Uint8Array): Promise<{ server: TestServer; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = await serve((req, res, n) => {
    seen.push({ url: req.url, headers: req.headers, body: JSON.parse(server.bodies[n - 1] ?? '{}') as Record<string, unknown> });
    res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream' });
    res.end(answer(n));
  });
  open.push(server);
  return { server, seen };
}

async function gatewayTo(server: TestServer): Promise<ListeningGateway> {
  const preset = bedrock({
    region: 'us-east-1',
    credentials: { accessKeyId: ACCESS_KEY_ID, secretAccessKey: SECRET, sessionToken: SESSION_TOKEN },
  });
  const gateway = await listenGateway({
    routes: [{ model: '*', provider: { ...preset, baseURL: server.url.replace(/\/$/, '') }, upstreamModel: MODEL }],
    upstreamRetry: { maxRetries: 2, backoff: { initialMs: 1, maxMs: 1 } },
  });
  open.push(gateway);
  return gateway;
}

function askChat(gateway: ListeningGateway, stream = false): Promise<Response> {
  return fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'claude', stream, messages: [{ role: 'user', content: 'Hi' }] }),
  });
}

describe('Bedrock as a gateway upstream', () => {
  it('a Chat Completions request reaches Claude on Bedrock: signed, the model in the path, frames read back', async () => {
    const { server, seen } = await bedrockOf(() => frames('Hello from Bedrock'));
    const response = await askChat(await gatewayTo(server));
    expect(response.status).toBe(200);
    const answer = (await response.json()) as { choices: Array<{ message: { content: string }; finish_reason: string }> };
    expect(answer.choices[0]).toMatchObject({ message: { content: 'Hello from Bedrock' }, finish_reason: 'stop' });
    expect(seen[0]?.url).toBe('/model/anthropic.claude-3-5-haiku-20241022-v1%3A0/invoke-with-response-stream');
    expect(seen[0]?.headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE\/\d{8}\/us-east-1\/bedrock\/aws4_request, SignedHeaders=[a-z0-9;-]+, Signature=[0-9a-f]{64}$/,
    );
    expect(seen[0]?.headers['x-amz-security-token']).toBe(SESSION_TOKEN);
    expect(seen[0]?.body).toMatchObject({ anthropic_version: 'bedrock-2023-05-31' });
    expect(seen[0]?.body).not.toHaveProperty('model');
    expect(seen[0]?.body).not.toHaveProperty('stream');
  });

  it('streams to the client as Chat Completions SSE; a throttlingException before the first event is retried', async () => {
    const { server } = await bedrockOf((n) => (n === 1 ? bedrockExceptionFrame('throttlingException', 'slow down') : frames('streamed')));
    const response = await askChat(await gatewayTo(server), true);
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).toContain('"content":"streamed"');
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
    expect(server.requests).toBe(2);
  });

  it('never answers with an AWS secret, even when Bedrock echoes them', async () => {
    const echo = `${SECRET} ${SESSION_TOKEN} ${ACCESS_KEY_ID}`;
    const { server } = await bedrockOf(() => frames(echo));
    const text = await (await askChat(await gatewayTo(server))).text();
    expect(text).toContain('[redacted]');
    for (const secret of [SECRET, SESSION_TOKEN, ACCESS_KEY_ID]) expect(text).not.toContain(secret);
  });
});
