/** Request and response shapes, against msw: URLs, headers per auth style, bodies, overrides, typed errors. */
import {
  ApiError,
  AuthenticationError,
  BadRequestError,
  MAX_ERROR_MESSAGE_LENGTH,
  ProtocolError,
  RateLimitError,
  ServerError,
  Transport,
} from '@ai4ts/core';
import { HttpResponse, http } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { expectNoSecret } from './secret.js';

interface Seen {
  method: string;
  url: URL;
  headers: Headers;
  body: unknown;
}

const seen: Seen[] = [];
const server = setupServer();

/** Answers every request to `origin` with `reply` (default `{ ok: true }`) and records what arrived. */
function answer(origin: string, reply: () => Response = () => HttpResponse.json({ ok: true })) {
  server.use(
    http.all(`${origin}/*`, async ({ request }) => {
      const text = await request.text();
      seen.push({
        method: request.method,
        url: new URL(request.url),
        headers: request.headers,
        body: text ? JSON.parse(text) : undefined,
      });
      return reply();
    }),
  );
}

const last = (): Seen => {
  const request = seen.at(-1);
  if (!request) throw new Error('no request arrived');
  return request;
};

const ENV = [
  'OPENAI_API_KEY',
  'DEEPSEEK_API_KEY',
  'AZURE_OPENAI_API_KEY',
  'ANTHROPIC_API_KEY',
  'VLLM_API_KEY',
  'ZHIPUAI_API_KEY',
  'ZHIPU_API_KEY',
];
const saved = Object.fromEntries(ENV.map((name) => [name, process.env[name]]));

beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => {
  server.resetHandlers();
  seen.length = 0;
  for (const name of ENV) {
    if (saved[name] === undefined) delete process.env[name];
    else process.env[name] = saved[name];
  }
});
afterAll(() => server.close());

describe('URL assembly', () => {
  it('joins baseURL and path whatever their slashes, and merges the query from preset, client and call', async () => {
    answer('https://api.example.com');
    const transport = new Transport({
      provider: { ...new Transport().provider, query: { preset: '1', shared: 'preset' } },
      baseURL: 'https://api.example.com/v1/',
      apiKey: 'k',
      query: { client: '2', shared: 'client' },
    });
    await transport.json('/chat/completions', { options: { query: { call: '3' } } });
    const { url } = last();
    expect(url.pathname).toBe('/v1/chat/completions');
    expect(Object.fromEntries(url.searchParams)).toEqual({ preset: '1', shared: 'client', client: '2', call: '3' });

    await transport.json('models');
    expect(last().url.pathname).toBe('/v1/models');
  });

  it('keeps a query already in the baseURL and a baseURL without a path', async () => {
    answer('https://gw.example.com');
    const transport = new Transport({ baseURL: 'https://gw.example.com?tenant=a', apiKey: 'k' });
    await transport.json('chat/completions');
    expect(last().url.href).toBe('https://gw.example.com/chat/completions?tenant=a');
  });

  it('rejects a provider that needs a baseURL when none is given, and an invalid baseURL', async () => {
    await expect(new Transport({ provider: 'openai-compatible' }).json('models')).rejects.toThrow(/needs a baseURL/);
    expect(() => new Transport({ baseURL: 'not a url', apiKey: 'k' })).toThrow(/Invalid baseURL/);
  });
});

describe('auth styles', () => {
  it('bearer: Authorization with the key from the option', async () => {
    answer('https://api.openai.com');
    await new Transport({ apiKey: 'sk-test' }).json('/models');
    expect(last().url.href).toBe('https://api.openai.com/v1/models');
    expect(last().headers.get('authorization')).toBe('Bearer sk-test');
  });

  it('bearer: the key from the preset env var, read at request time, not at construction', async () => {
    delete process.env.DEEPSEEK_API_KEY;
    const transport = new Transport({ provider: 'deepseek' });
    const missing = await transport.json('/models').catch((error: unknown) => error);
    expect(missing).toBeInstanceOf(AuthenticationError);
    expect((missing as Error).message).toContain('DEEPSEEK_API_KEY');
    expect((missing as AuthenticationError).status).toBeUndefined();

    process.env.DEEPSEEK_API_KEY = 'ds-key';
    answer('https://api.deepseek.com');
    await transport.json('/models');
    expect(last().url.href).toBe('https://api.deepseek.com/models');
    expect(last().headers.get('authorization')).toBe('Bearer ds-key');
  });

  it('tries the env vars in order and names them all when none is set', async () => {
    delete process.env.ZHIPUAI_API_KEY;
    delete process.env.ZHIPU_API_KEY;
    const transport = new Transport({ provider: 'zhipu' });
    await expect(transport.json('/models')).rejects.toThrow(/ZHIPUAI_API_KEY or ZHIPU_API_KEY/);
    process.env.ZHIPU_API_KEY = 'second';
    answer('https://open.bigmodel.cn');
    await transport.json('/models');
    expect(last().url.pathname).toBe('/api/paas/v4/models');
    expect(last().headers.get('authorization')).toBe('Bearer second');
  });

  it('azure: api-key header, api-version query, baseURL from the user', async () => {
    process.env.AZURE_OPENAI_API_KEY = 'az-key';
    answer('https://res.openai.azure.com');
    const transport = new Transport({
      provider: 'azure',
      baseURL: 'https://res.openai.azure.com/openai/deployments/gpt4o',
    });
    await transport.json('/chat/completions', { body: { messages: [] } });
    const request = last();
    expect(request.url.pathname).toBe('/openai/deployments/gpt4o/chat/completions');
    expect(request.url.searchParams.get('api-version')).toBe('2024-10-21');
    expect(request.headers.get('api-key')).toBe('az-key');
    expect(request.headers.has('authorization')).toBe(false);
  });

  it('anthropic: x-api-key and anthropic-version', async () => {
    process.env.ANTHROPIC_API_KEY = 'ant-key';
    answer('https://api.anthropic.com');
    await new Transport({ provider: 'anthropic' }).json('/messages', { body: { max_tokens: 1 } });
    const request = last();
    expect(request.url.href).toBe('https://api.anthropic.com/v1/messages');
    expect(request.headers.get('x-api-key')).toBe('ant-key');
    expect(request.headers.get('anthropic-version')).toBe('2023-06-01');
    expect(request.headers.has('authorization')).toBe(false);
  });

  it('ollama: no auth header even with a key in the environment', async () => {
    process.env.OPENAI_API_KEY = 'must-not-leak';
    answer('http://127.0.0.1:11434');
    await new Transport({ provider: 'ollama' }).json('/models');
    expect(last().url.href).toBe('http://127.0.0.1:11434/v1/models');
    expect(last().headers.has('authorization')).toBe(false);
  });

  it('vllm: the key is optional; sent when VLLM_API_KEY is set', async () => {
    delete process.env.VLLM_API_KEY;
    answer('http://127.0.0.1:8000');
    const transport = new Transport({ provider: 'vllm' });
    await transport.json('/models');
    expect(last().headers.has('authorization')).toBe(false);
    process.env.VLLM_API_KEY = 'vk';
    await transport.json('/models');
    expect(last().headers.get('authorization')).toBe('Bearer vk');
  });

  it('openai-compatible: never sends OPENAI_API_KEY to an arbitrary baseURL', async () => {
    process.env.OPENAI_API_KEY = 'must-not-leak';
    answer('https://llm.internal');
    const transport = new Transport({ provider: 'openai-compatible', baseURL: 'https://llm.internal/v1' });
    await transport.json('/models');
    expect(last().headers.has('authorization')).toBe(false);
    await transport.json('/models', { options: { apiKey: 'given' } });
    expect(last().headers.get('authorization')).toBe('Bearer given');
  });
});

describe('bodies, headers and per-call overrides', () => {
  it('sends the JSON body with extraBody merged last, and the accept header per call kind', async () => {
    answer('https://api.openai.com');
    const transport = new Transport({ apiKey: 'k' });
    await transport.json('/chat/completions', {
      body: { model: 'm', temperature: 1 },
      options: { extraBody: { temperature: 0, enable_search: true } },
    });
    const request = last();
    expect(request.method).toBe('POST');
    expect(request.body).toEqual({ model: 'm', temperature: 0, enable_search: true });
    expect(request.headers.get('content-type')).toBe('application/json');
    expect(request.headers.get('accept')).toBe('application/json');

    await transport.json('/models', { method: 'DELETE' });
    expect(last().method).toBe('DELETE');
    expect(last().body).toBeUndefined();
  });

  it('stream() posts with accept: text/event-stream', async () => {
    answer('https://api.openai.com', () => new HttpResponse('data: {"a":1}\n\n', {
      headers: { 'content-type': 'text/event-stream' },
    }));
    const stream = await new Transport({ apiKey: 'k' }).stream('/chat/completions', { body: { stream: true } });
    expect(last().method).toBe('POST');
    expect(last().headers.get('accept')).toBe('text/event-stream');
    const events = [];
    for await (const event of stream) events.push(event);
    expect(events).toEqual([{ event: 'message', data: '{"a":1}' }]);
    expect(stream.response.status).toBe(200);
  });

  it('stream() raises a 200 JSON error body as the provider\'s ApiError, not an empty stream', async () => {
    answer('https://api.openai.com', () =>
      HttpResponse.json({ error: { message: 'You exceeded your quota', type: 'insufficient_quota', code: null } }),
    );
    const error = await new Transport({ apiKey: 'k' })
      .stream('/chat/completions', { body: { stream: true } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ message: 'You exceeded your quota', code: 'insufficient_quota' });
  });

  it('applies per-call baseURL, apiKey and headers over the client, and client headers over the preset', async () => {
    answer('https://primary.example.com');
    answer('https://other.example.com');
    const transport = new Transport({
      baseURL: 'https://primary.example.com/v1',
      apiKey: 'client-key',
      headers: { 'x-team': 'core', 'x-trace': 'client' },
    });
    await transport.json('/models');
    expect(last().url.origin).toBe('https://primary.example.com');
    expect(last().headers.get('x-team')).toBe('core');

    await transport.json('/models', {
      options: { baseURL: 'https://other.example.com/v2', apiKey: 'call-key', headers: { 'x-trace': 'call' } },
    });
    const request = last();
    expect(request.url.href).toBe('https://other.example.com/v2/models');
    expect(request.headers.get('authorization')).toBe('Bearer call-key');
    expect(request.headers.get('x-team')).toBe('core');
    expect(request.headers.get('x-trace')).toBe('call');
  });

  it('lets explicit headers replace the auth header', async () => {
    answer('https://api.openai.com');
    await new Transport({ apiKey: 'k', headers: { Authorization: 'Token custom' } }).json('/models');
    expect(last().headers.get('authorization')).toBe('Token custom');
  });

  it('uses the custom fetch for every request', async () => {
    const fetch = vi.fn(async (input: RequestInfo | URL, init?: RequestInit) => {
      const request = new Request(input, init);
      return Response.json({ url: request.url, auth: request.headers.get('authorization') });
    });
    const transport = new Transport({ apiKey: 'k', baseURL: 'https://nowhere.invalid/v1', fetch });
    const body = await transport.json<{ url: string; auth: string }>('/models');
    expect(fetch).toHaveBeenCalledTimes(1);
    expect(body).toEqual({ url: 'https://nowhere.invalid/v1/models', auth: 'Bearer k' });
  });

  it('fails before sending when the body cannot be encoded or the key cannot be a header', async () => {
    answer('https://api.openai.com');
    const transport = new Transport({ apiKey: 'k', maxRetries: 2 });
    await expect(transport.json('/x', { body: { n: 1n } })).rejects.toThrow(TypeError);
    const error = await transport.json('/x', { options: { apiKey: 'sk-bad\nkey' } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AuthenticationError);
    expectNoSecret(error, 'sk-bad');
    expect(seen).toHaveLength(0);
  });

  it('json() raises ProtocolError with the text for a body that is not JSON', async () => {
    answer('https://api.openai.com', () => new HttpResponse('<html>hello</html>', { status: 200 }));
    const error = await new Transport({ apiKey: 'k' }).json('/models').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProtocolError);
    expect((error as ProtocolError).line).toBe('<html>hello</html>');
  });
});

describe('provider error bodies become typed errors', () => {
  const failWith = async (status: number, body: string, headers: Record<string, string> = {}) => {
    answer('https://api.openai.com', () => new HttpResponse(body, { status, headers }));
    return new Transport({ apiKey: 'sk-secret-123', maxRetries: 0 }).json('/chat/completions', { body: {} }).then(
      () => {
        throw new Error('expected a failure');
      },
      (error: unknown) => error as ApiError,
    );
  };

  it('OpenAI shape {error:{message,type,code,param}} with a request id -> AuthenticationError', async () => {
    const error = await failWith(
      401,
      JSON.stringify({ error: { message: 'Incorrect API key', type: 'invalid_request_error', code: 'invalid_api_key', param: null } }),
      { 'x-request-id': 'req_1', 'content-type': 'application/json' },
    );
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(error).toMatchObject({
      status: 401,
      code: 'invalid_api_key',
      type: 'invalid_request_error',
      requestId: 'req_1',
      message: '401 Incorrect API key',
    });
    expect(error.param).toBeUndefined();
    expectNoSecret(error, 'sk-secret-123');
  });

  it('{error:"..."} with 429 -> RateLimitError carrying retryAfterMs', async () => {
    const error = await failWith(429, JSON.stringify({ error: 'slow down' }), { 'retry-after': '7' });
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error.message).toBe('429 slow down');
    expect((error as RateLimitError).retryAfterMs).toBe(7000);
  });

  it('{message, code} (Zhipu/Qwen style) -> BadRequestError with code and param', async () => {
    const error = await failWith(400, JSON.stringify({ code: 'InvalidParameter', message: 'bad model', param: 'model' }));
    expect(error).toBeInstanceOf(BadRequestError);
    expect(error).toMatchObject({ code: 'InvalidParameter', param: 'model', message: '400 bad model' });
  });

  it('{detail:[{msg}]} (FastAPI, vLLM) -> BadRequestError', async () => {
    const error = await failWith(422, JSON.stringify({ detail: [{ msg: 'field required' }, { msg: 'bad type' }] }));
    expect(error).toBeInstanceOf(BadRequestError);
    expect(error.message).toBe('422 field required; bad type');
  });

  it('{msg} -> ServerError on 5xx; a long HTML page is cut', async () => {
    expect(await failWith(500, JSON.stringify({ msg: 'internal' }))).toBeInstanceOf(ServerError);
    const page = `<html>${'x'.repeat(5000)}</html>`;
    const error = await failWith(502, page);
    expect(error).toBeInstanceOf(ServerError);
    expect(error.message.length).toBeLessThan(MAX_ERROR_MESSAGE_LENGTH + 100);
    expect(error.body).toBe(error.message.slice('502 '.length));
  });

  it('an empty error body still names the status', async () => {
    const error = await failWith(404, '');
    expect(error).toBeInstanceOf(BadRequestError);
    expect(error.message).toBe('404 Not Found');
  });

  it('scrubs the key when a provider echoes it back', async () => {
    const error = await failWith(401, JSON.stringify({ error: { message: 'Bad key sk-secret-123 given' } }));
    expect(error.message).toBe('401 Bad key [redacted] given');
    expectNoSecret(error, 'sk-secret-123');
  });
});
