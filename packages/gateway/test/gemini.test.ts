/**
 * Gemini through the gateway: Google's own `@google/genai` client against each upstream protocol (streamed and not,
 * with a function-call round trip), OpenAI's and Anthropic's clients against a Gemini 3 upstream (which refuses a
 * function-call turn sent back without its thought signature), a Vertex AI upstream with an access token, Gemini's
 * error shape, and the key sent as `key=`. The upstreams are @ai4ts/testing's scripted model and node:http servers.
 */
import Anthropic from '@anthropic-ai/sdk';
import { vertex } from '@ai4ts/core';
import { type AccessLogEntry, type GatewayProtocol, type ListeningGateway, listenGateway } from '@ai4ts/gateway';
import { type MockModel, type MockScriptContext, type MockTurn, startMockModel } from '@ai4ts/testing';
import { sendSse, serve, sseText } from '@ai4ts/test-kit';
import { type Content, GoogleGenAI, type Part } from '@google/genai';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const MODEL = 'gemini-3-pro-preview';
const ANSWER = 'Paris has 18C.';
const REASONING = 'The user wants the weather: call the tool.';
const WEATHER_SCHEMA = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
const USAGE = { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 };
const KEY = 'sk-gateway-gemini-4d2e';

/** Calls the tool until a request carries its result (`18C`), then answers. */
function script(bodies: MockScriptContext[]) {
  return (_body: unknown, context: MockScriptContext): MockTurn => {
    bodies.push(context);
    if (JSON.stringify(context.body).includes('18C')) return { content: ANSWER, usage: USAGE };
    return { reasoning: REASONING, toolCalls: [{ name: 'get_weather', arguments: { city: 'Paris' } }], usage: USAGE };
  };
}

interface Upstream {
  model: MockModel;
  gateway: ListeningGateway;
  seen: MockScriptContext[];
  log: AccessLogEntry[];
}

const PROTOCOLS: GatewayProtocol[] = ['chat', 'responses', 'messages', 'gemini'];
const upstreams = new Map<GatewayProtocol, Upstream>();

beforeAll(async () => {
  for (const protocol of PROTOCOLS) {
    const seen: MockScriptContext[] = [];
    const log: AccessLogEntry[] = [];
    const model = await startMockModel({ script: script(seen), seed: 3 });
    const upstream = protocol === 'gemini' ? model.geminiBaseURL : model.baseURL;
    const gateway = await listenGateway({
      upstream,
      upstreamProtocol: protocol,
      auth: KEY,
      upstreamToken: 'sk-upstream-key-91ab',
      log: (entry) => log.push(entry),
    });
    upstreams.set(protocol, { model, gateway, seen, log });
  }
});

afterAll(async () => {
  for (const { model, gateway } of upstreams.values()) {
    await gateway.close();
    await model.close();
  }
});

function upstreamOf(protocol: GatewayProtocol): Upstream {
  const upstream = upstreams.get(protocol);
  if (!upstream) throw new Error(`no ${protocol} upstream`);
  return upstream;
}

const genai = (protocol: GatewayProtocol) =>
  new GoogleGenAI({ apiKey: KEY, httpOptions: { baseUrl: upstreamOf(protocol).gateway.url } });

const config = { tools: [{ functionDeclarations: [{ name: 'get_weather', parametersJsonSchema: WEATHER_SCHEMA }] }] };

/** The user's question, the model's turn as the client received it, and the function's result. */
function nextTurn(question: Content, model: Content, call: { id?: string | undefined; name?: string | undefined }): Content[] {
  const functionResponse = { ...(call.id && { id: call.id }), name: call.name ?? '', response: { output: '18C' } };
  return [question, model, { role: 'user', parts: [{ functionResponse }] }];
}

describe.each(PROTOCOLS)('@google/genai through the gateway to a %s upstream', (protocol) => {
  const question: Content = { role: 'user', parts: [{ text: 'Weather in Paris?' }] };

  it('generateContent: a function call, its result, the answer, usage', async () => {
    const client = genai(protocol);
    const first = await client.models.generateContent({ model: MODEL, contents: [question], config });
    const call = first.functionCalls?.[0];
    expect(call).toMatchObject({ name: 'get_weather', args: { city: 'Paris' } });
    expect(first.candidates?.[0]?.finishReason).toBe('STOP');
    const thoughts = first.candidates?.[0]?.content?.parts?.filter((part) => part.thought).map((part) => part.text).join('');
    expect(thoughts).toBe(protocol === 'gemini' ? '' : REASONING);
    const model = first.candidates?.[0]?.content;
    if (!model || !call) throw new Error('no model turn');
    const second = await client.models.generateContent({ model: MODEL, contents: nextTurn(question, model, call), config });
    expect(second.text).toBe(ANSWER);
    expect(second.usageMetadata).toMatchObject({ promptTokenCount: 12, totalTokenCount: 19 });
    // The upstream received the result for the call it made.
    expect(JSON.stringify(upstreamOf(protocol).seen.at(-1)?.body)).toContain('18C');
  });

  it('generateContentStream: the same round trip over SSE', async () => {
    const client = genai(protocol);
    const parts: Part[] = [];
    let finish: string | undefined;
    for await (const chunk of await client.models.generateContentStream({ model: MODEL, contents: [question], config })) {
      parts.push(...(chunk.candidates?.[0]?.content?.parts ?? []));
      finish = chunk.candidates?.[0]?.finishReason ?? finish;
    }
    expect(finish).toBe('STOP');
    const call = parts.find((part) => part.functionCall)?.functionCall;
    expect(call).toMatchObject({ name: 'get_weather', args: { city: 'Paris' } });
    if (!call) throw new Error('no call');
    const model: Content = { role: 'model', parts: parts.filter((part) => part.text !== '' || part.thoughtSignature) };
    let text = '';
    let usage: unknown;
    for await (const chunk of await client.models.generateContentStream({ model: MODEL, contents: nextTurn(question, model, call), config })) {
      text += chunk.text ?? '';
      usage = chunk.usageMetadata ?? usage;
    }
    expect(text).toBe(ANSWER);
    expect(usage).toMatchObject({ promptTokenCount: 12, candidatesTokenCount: 7, totalTokenCount: 19 });
  });
});

describe('a Gemini 3 upstream', () => {
  /** The thought signature on the function call of the model turn the upstream received last. */
  const sentSignature = () => {
    const body = upstreamOf('gemini').seen.at(-1)?.body as { contents: Content[] };
    const model = body.contents.find((content) => content.role === 'model');
    return model?.parts?.find((part) => part.functionCall)?.thoughtSignature;
  };

  it('openai client, two-step tool loop: the signature goes back on the function call exactly', async () => {
    const client = new OpenAI({ baseURL: `${upstreamOf('gemini').gateway.url}/v1`, apiKey: KEY, maxRetries: 0 });
    const tools: OpenAI.ChatCompletionTool[] = [{ type: 'function', function: { name: 'get_weather', parameters: WEATHER_SCHEMA } }];
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather in Paris?' }];
    const first = await client.chat.completions.stream({ model: MODEL, messages, tools }).finalChatCompletion();
    const message = first.choices[0]?.message;
    const call = message?.tool_calls?.[0];
    expect(first.choices[0]?.finish_reason).toBe('tool_calls');
    if (!message || call?.type !== 'function') throw new Error('no call');
    expect(JSON.parse(call.function.arguments)).toEqual({ city: 'Paris' });
    messages.push(message, { role: 'tool', tool_call_id: call.id, content: '18C' });
    const second = await client.chat.completions.create({ model: MODEL, messages, tools });
    expect(second.choices[0]?.message.content).toBe(ANSWER);
    // The scripted Gemini 3 server refuses a call without the signature it issued: this one was restored.
    expect(sentSignature()).toMatch(/^Cs/);
  });

  it('anthropic client, two-step tool loop, streamed', async () => {
    const client = new Anthropic({ baseURL: upstreamOf('gemini').gateway.url, apiKey: KEY, maxRetries: 0 });
    const tools: Anthropic.Tool[] = [{ name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }];
    const messages: Anthropic.MessageParam[] = [{ role: 'user', content: 'Weather in Paris?' }];
    const first = await client.messages.stream({ model: MODEL, max_tokens: 256, messages, tools }).finalMessage();
    const call = first.content.find((block) => block.type === 'tool_use');
    expect(first.stop_reason).toBe('tool_use');
    if (call?.type !== 'tool_use') throw new Error('no call');
    expect(call.id).toMatch(/^[a-zA-Z0-9_-]+$/);
    messages.push({ role: 'assistant', content: first.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: '18C' }] });
    const second = await client.messages.stream({ model: MODEL, max_tokens: 256, messages, tools }).finalMessage();
    expect(second.content).toEqual([{ type: 'text', text: ANSWER, citations: null }].map(({ citations: _, ...block }) => block));
    expect(sentSignature()).toMatch(/^Cs/);
  });
});

describe('Gemini requests the gateway refuses or guards', () => {
  it('a bad request is a 400 in Gemini error shape', async () => {
    const response = await fetch(`${upstreamOf('chat').gateway.url}/v1beta/models/${MODEL}:generateContent`, {
      method: 'POST',
      headers: { 'x-goog-api-key': KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ contents: [] }),
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      error: { code: 400, message: 'contents: contents must not be empty', status: 'INVALID_ARGUMENT' },
    });
  });

  it('a stream without alt=sse is a 400 that says to add it', async () => {
    const response = await fetch(`${upstreamOf('chat').gateway.url}/v1beta/models/${MODEL}:streamGenerateContent`, {
      method: 'POST',
      headers: { 'x-goog-api-key': KEY },
      body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }),
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { message: string; status: string } }).error).toMatchObject({
      message: expect.stringContaining('alt=sse'),
      status: 'INVALID_ARGUMENT',
    });
  });

  it('a wrong key is a 401 in Gemini shape; the key as key= is accepted and never logged', async () => {
    const upstream = upstreamOf('chat');
    const url = (key: string) => `${upstream.gateway.url}/v1beta/models/${MODEL}:generateContent?key=${key}`;
    const body = JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'Hello' }] }], safetySettings: [] });
    const refused = await fetch(url('sk-wrong-key-0000'), { method: 'POST', body });
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { error: { status: string; message: string } }).error).toEqual({
      code: 401,
      status: 'UNAUTHENTICATED',
      message: 'Incorrect API key in the key query parameter',
    });
    const accepted = await fetch(url(KEY), { method: 'POST', body });
    expect(accepted.status).toBe(200);
    // An empty list of safety settings is not sent anywhere: named as dropped.
    expect(accepted.headers.get('x-ai4ts-dropped')).toBe('safetySettings');
    const answer = (await accepted.json()) as { candidates: { content: { parts: { text: string }[] }; finishReason: string }[] };
    expect(answer.candidates[0]?.finishReason).toBe('STOP');
    const logged = JSON.stringify(upstream.log);
    expect(logged).toContain(`/v1beta/models/${MODEL}:generateContent`);
    expect(logged).not.toContain(KEY);
    expect(logged).not.toContain('sk-wrong-key');
  });
});

describe('a Vertex AI upstream', () => {
  it('gets the Vertex path and the access token as a bearer; the token is never in the answer or the log', async () => {
    const TOKEN = 'ya29.vertex-access-token-5c1f';
    const seen: { url: string; authorization: string | undefined }[] = [];
    const server = await serve((req, res) => {
      seen.push({ url: req.url ?? '', authorization: req.headers.authorization });
      sendSse(
        res,
        sseText([
          { candidates: [{ content: { role: 'model', parts: [{ text: `Echo ${TOKEN}` }] }, index: 0 }] },
          {
            candidates: [{ content: { role: 'model', parts: [{ text: '' }] }, finishReason: 'STOP', index: 0 }],
            usageMetadata: { promptTokenCount: 2, candidatesTokenCount: 3, totalTokenCount: 5 },
          },
        ]),
      );
    });
    const log: AccessLogEntry[] = [];
    const requests: boolean[] = [];
    const preset = vertex({ project: 'p', location: 'global', publisher: 'google' });
    const gateway = await listenGateway({
      routes: [
        {
          model: '*',
          provider: { ...preset, baseURL: `${server.url}v1/projects/p/locations/global/publishers/google` },
          accessToken: ({ refresh }) => {
            requests.push(refresh);
            return { token: TOKEN, expiresAt: Date.now() + 3_600_000 };
          },
        },
      ],
      log: (entry) => log.push(entry),
    });
    try {
      const client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'none', maxRetries: 0 });
      const completion = await client.chat.completions.create({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'hi' }] });
      expect(seen).toEqual([
        {
          url: '/v1/projects/p/locations/global/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse',
          authorization: `Bearer ${TOKEN}`,
        },
      ]);
      expect(requests).toEqual([false]);
      // The upstream echoed the token: redacted on its way to the client.
      const content = completion.choices[0]?.message.content ?? '';
      expect(content).toMatch(/^Echo /);
      expect(content).not.toContain(TOKEN);
      expect(JSON.stringify(log)).not.toContain(TOKEN);
    } finally {
      await gateway.close();
      await server.close();
    }
  });
});

describe('a Gemini client in front of a Gemini 3 upstream', () => {
  it("a text answer's thought signature comes on its own part, and goes back on it", async () => {
    const upstream = upstreamOf('gemini');
    const client = genai('gemini');
    const question: Content = { role: 'user', parts: [{ text: 'Weather in Paris?' }] };
    const first = await client.models.generateContent({ model: MODEL, contents: [question], config });
    const model = first.candidates?.[0]?.content;
    if (!model) throw new Error('no model turn');
    const functionResponse = { name: 'get_weather', response: { output: '18C' } };
    const results: Content = { role: 'user', parts: [{ functionResponse }] };
    const parts: Part[] = [];
    for await (const chunk of await client.models.generateContentStream({ model: MODEL, contents: [question, model, results], config })) {
      parts.push(...(chunk.candidates?.[0]?.content?.parts ?? []));
    }
    // As Gemini streams it: the text, then its signature on an empty text part.
    const signature = parts.find((part) => part.thoughtSignature !== undefined);
    expect(signature).toEqual({ text: '', thoughtSignature: expect.stringMatching(/^Cs/) });
    const answer: Content = { role: 'model', parts };
    const again = await client.models.generateContent({
      model: MODEL,
      contents: [question, model, results, answer, { role: 'user', parts: [{ text: 'Thanks' }] }],
      config,
    });
    // Aggregated, the signature is on the text part itself.
    expect(again.candidates?.[0]?.content?.parts).toEqual([{ text: ANSWER, thoughtSignature: expect.stringMatching(/^Cs/) }]);
    // Both signatures went back to the upstream on the parts they came with.
    const sent = upstream.seen.at(-1)?.body as { contents: Content[] };
    expect(sent.contents.map((content) => content.parts)).toEqual([
      question.parts,
      [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: model.parts?.[0]?.thoughtSignature }],
      [{ functionResponse }],
      [{ text: ANSWER, thoughtSignature: signature?.thoughtSignature }],
      [{ text: 'Thanks' }],
    ]);
  });
});
