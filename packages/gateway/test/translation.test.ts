/**
 * Request fields across protocols: each inbound protocol's request validated at the boundary (a 400 in its own error
 * shape naming the field), every field translated where the upstream's protocol has it, named in `x-ai4ts-dropped`
 * or refused (`onUnsupported: 'refuse'`) where it has not, and structured output carried to every upstream, checked
 * with openai-node's own `parse` helpers.
 */
import { type GatewayProtocol, type ListeningGateway, listenGateway, type OnUnsupported } from '@ai4ts/gateway';
import { type MockModel, type MockRequestBody, type MockTurn, startMockModel } from '@ai4ts/testing';
import OpenAI from 'openai';
import { zodResponseFormat, zodTextFormat } from 'openai/helpers/zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';

const PROTOCOLS: GatewayProtocol[] = ['chat', 'responses', 'messages', 'gemini'];
const PATHS: Record<GatewayProtocol, string> = {
  chat: '/v1/chat/completions',
  responses: '/v1/responses',
  messages: '/v1/messages',
  gemini: '/v1beta/models/m:generateContent',
};
const WEATHER = { city: 'Paris', celsius: 18 };

/** Whether an upstream body asks for a structured answer, in its protocol's words. */
function asksForJson(body: MockRequestBody): boolean {
  const record = body as Record<string, unknown>;
  const text = record.text as { format?: unknown } | undefined;
  const config = record.output_config as { format?: unknown } | undefined;
  const generation = record.generationConfig as { responseMimeType?: unknown } | undefined;
  return (
    record.response_format !== undefined ||
    text?.format !== undefined ||
    config?.format !== undefined ||
    generation?.responseMimeType === 'application/json'
  );
}

/** The scripted model: the structured answer when the request asks for one, prose otherwise (as a model would). */
const script = (body: MockRequestBody): MockTurn => (asksForJson(body) ? { object: WEATHER } : { content: 'It is 18C in Paris.' });

const models = new Map<GatewayProtocol, MockModel>();
const gateways = new Map<string, ListeningGateway>();

async function gatewayFor(upstream: GatewayProtocol, onUnsupported?: OnUnsupported): Promise<ListeningGateway> {
  const key = `${upstream}:${onUnsupported ?? ''}`;
  let gateway = gateways.get(key);
  if (!gateway) {
    const model = models.get(upstream);
    if (!model) throw new Error(`no ${upstream} model`);
    gateway = await listenGateway({
      upstream: upstream === 'gemini' ? model.geminiBaseURL : model.baseURL,
      upstreamProtocol: upstream,
      auth: 'sk-gateway',
      upstreamToken: 'sk-upstream',
      ...(onUnsupported && { onUnsupported }),
    });
    gateways.set(key, gateway);
  }
  return gateway;
}

beforeAll(async () => {
  for (const protocol of PROTOCOLS) models.set(protocol, await startMockModel({ script, seed: 3 }));
});

afterAll(async () => {
  for (const gateway of gateways.values()) await gateway.close();
  for (const model of models.values()) await model.close();
});

function modelOf(protocol: GatewayProtocol): MockModel {
  const model = models.get(protocol);
  if (!model) throw new Error(`no ${protocol} model`);
  return model;
}

/** One POST in `inbound`'s protocol through a gateway in front of `upstream`; the upstream body it sent, if any. */
async function send(
  inbound: GatewayProtocol,
  upstream: GatewayProtocol,
  body: Record<string, unknown> | string,
  onUnsupported?: OnUnsupported,
) {
  const gateway = await gatewayFor(upstream, onUnsupported);
  const model = modelOf(upstream);
  const before = model.requests.length;
  const response = await fetch(`${gateway.url}${PATHS[inbound]}`, {
    method: 'POST',
    headers: { authorization: 'Bearer sk-gateway', 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const json = (await response.json()) as Record<string, unknown>;
  const sent = model.requests.slice(before).map((request) => request.body as Record<string, unknown>);
  return { status: response.status, dropped: response.headers.get('x-ai4ts-dropped'), json, upstream: sent[0] };
}

const TOOL_SCHEMA = { type: 'object', properties: { city: { type: 'string' } } };
const chatBase = {
  model: 'm',
  messages: [{ role: 'user', content: 'Weather?' }],
  tools: [{ type: 'function', function: { name: 'weather', parameters: TOOL_SCHEMA } }],
};
const responsesBase = { model: 'm', input: 'Weather?', tools: [{ type: 'function', name: 'weather', parameters: TOOL_SCHEMA }] };
const geminiBase = {
  contents: [{ role: 'user', parts: [{ text: 'Weather?' }] }],
  tools: [{ functionDeclarations: [{ name: 'weather', parametersJsonSchema: TOOL_SCHEMA }] }],
};
const messagesBase = {
  model: 'm',
  max_tokens: 100,
  messages: [{ role: 'user', content: 'Weather?' }],
  tools: [{ name: 'weather', input_schema: TOOL_SCHEMA }],
};

describe('validation at the boundary: a 400 in the inbound protocol’s shape naming the field; the upstream is not called', () => {
  const cases: [GatewayProtocol, Record<string, unknown>, string][] = [
    ['chat', { ...chatBase, temperature: 'hot' }, 'temperature'],
    ['chat', { ...chatBase, tool_choice: { type: 'function', function: {} } }, 'tool_choice.function.name'],
    ['chat', { ...chatBase, tools: [{ type: 'function', function: { parameters: TOOL_SCHEMA } }] }, 'tools[0].function.name'],
    ['chat', { ...chatBase, parallel_tool_calls: 'no' }, 'parallel_tool_calls'],
    ['chat', { ...chatBase, response_format: { type: 'json_schema', json_schema: { schema: {} } } }, 'response_format.json_schema.name'],
    ['responses', { ...responsesBase, temperature: 'hot' }, 'temperature'],
    ['responses', { ...responsesBase, tools: [{ type: 'function', parameters: TOOL_SCHEMA }] }, 'tools[0].name'],
    ['responses', { ...responsesBase, tool_choice: { type: 'function' } }, 'tool_choice.name'],
    ['messages', { ...messagesBase, temperature: 'hot' }, 'temperature'],
    ['messages', { ...messagesBase, tool_choice: { type: 'tool' } }, 'tool_choice.name'],
    ['messages', { ...messagesBase, stop_sequences: 'END' }, 'stop_sequences'],
    ['gemini', { ...geminiBase, generationConfig: { temperature: 'hot' } }, 'generationConfig.temperature'],
    ['gemini', { ...geminiBase, tools: [{ functionDeclarations: [{ description: 'no name' }] }] }, 'tools[0].functionDeclarations[0].name'],
    ['gemini', { ...geminiBase, toolConfig: { functionCallingConfig: { mode: 'SOMETIMES' } } }, 'toolConfig.functionCallingConfig.mode'],
  ];
  it.each(cases)('%s: %j names %s', async (inbound, body, param) => {
    const { status, json, upstream } = await send(inbound, 'chat', body);
    expect(status).toBe(400);
    expect(upstream).toBeUndefined();
    if (inbound === 'messages') {
      expect(json).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
      expect((json.error as { message: string }).message).toContain(param);
    } else if (inbound === 'gemini') {
      expect(json).toMatchObject({ error: { code: 400, status: 'INVALID_ARGUMENT' } });
      expect((json.error as { message: string }).message).toMatch(new RegExp(`^${param.replace(/[.[\]]/g, '\\$&')}: `));
    } else expect(json).toMatchObject({ error: { type: 'invalid_request_error', param } });
  });

  it('a tool schema nested 100,000 levels deep is a 400 naming the field, not an unreachable upstream', async () => {
    // Written as text: JSON.stringify itself cannot go that deep.
    const depth = 100_000;
    const schema = `${'{"type":"object","properties":{"a":'.repeat(depth)}{"type":"string"}${'}}'.repeat(depth)}`;
    const tools = `[{"type":"function","function":{"name":"deep","parameters":${schema}}}]`;
    const body = `{"model":"m","messages":[{"role":"user","content":"Weather?"}],"tools":${tools}}`;
    const { status, json, upstream } = await send('chat', 'chat', body);
    expect(status).toBe(400);
    expect(upstream).toBeUndefined();
    expect(json).toMatchObject({ error: { type: 'invalid_request_error', param: 'tools[0].function.parameters' } });
    expect((json.error as { message: string }).message).toMatch(/nested deeper than 128 levels/);
  });
});

describe('fields translated where the upstream has them, named where it has not', () => {
  it('chat -> messages: parallel_tool_calls, stop, user; seed and n named', async () => {
    const body = { ...chatBase, parallel_tool_calls: false, stop: 'END', user: 'u-1', seed: 7, n: 3, top_p: 0.5 };
    const { status, dropped, upstream } = await send('chat', 'messages', body);
    expect(status).toBe(200);
    expect(upstream).toMatchObject({
      tool_choice: { type: 'auto', disable_parallel_tool_use: true },
      stop_sequences: ['END'],
      metadata: { user_id: 'u-1' },
      top_p: 0.5,
    });
    expect(upstream).not.toHaveProperty('seed');
    expect(dropped).toBe('n, seed');
  });

  it('chat -> chat: seed, stop, user, parallel_tool_calls and service_tier carried as they are', async () => {
    const body = { ...chatBase, parallel_tool_calls: false, stop: ['a', 'b'], user: 'u-1', seed: 7, service_tier: 'flex' };
    const { status, dropped, upstream } = await send('chat', 'chat', body);
    expect(status).toBe(200);
    expect(upstream).toMatchObject({ parallel_tool_calls: false, stop: ['a', 'b'], user: 'u-1', seed: 7, service_tier: 'flex' });
    expect(dropped).toBeNull();
  });

  it('chat -> responses: stop and seed have no equivalent and are named; the service tier of another protocol too', async () => {
    const body = { ...chatBase, stop: 'END', seed: 1, parallel_tool_calls: false, service_tier: 'flex' };
    const { dropped, upstream } = await send('chat', 'responses', body);
    expect(upstream).toMatchObject({ parallel_tool_calls: false });
    expect(upstream).not.toHaveProperty('stop');
    expect(upstream).not.toHaveProperty('service_tier');
    expect(dropped).toBe('stop, seed, service_tier');
  });

  it('responses -> chat: parallel_tool_calls and user', async () => {
    const { dropped, upstream } = await send('chat', 'chat', { ...chatBase });
    expect(dropped).toBeNull();
    const second = await send('responses', 'chat', { ...responsesBase, parallel_tool_calls: false, user: 'u-2' });
    expect(second.upstream).toMatchObject({ parallel_tool_calls: false, user: 'u-2' });
    expect(second.dropped).toBeNull();
    expect(upstream).not.toHaveProperty('parallel_tool_calls');
  });

  it('messages -> chat: disable_parallel_tool_use, stop_sequences, metadata.user_id; top_k named', async () => {
    const body = {
      ...messagesBase,
      tool_choice: { type: 'auto', disable_parallel_tool_use: true },
      stop_sequences: ['END'],
      metadata: { user_id: 'u-3' },
      top_k: 5,
    };
    const { dropped, upstream } = await send('messages', 'chat', body);
    expect(upstream).toMatchObject({ parallel_tool_calls: false, stop: ['END'], user: 'u-3', tool_choice: 'auto' });
    expect(dropped).toBe('top_k');
  });

  it('metadata keys other than the session id are named, in every protocol', async () => {
    const chat = await send('chat', 'chat', { ...chatBase, metadata: { session_id: 's', tag: 'x' } });
    const responses = await send('responses', 'chat', { ...responsesBase, metadata: { tag: 'x' }, text: { verbosity: 'low' } });
    const messages = await send('messages', 'chat', { ...messagesBase, metadata: { user_id: 'u', tag: 'x' } });
    expect([chat.dropped, responses.dropped, messages.dropped]).toEqual(['metadata.tag', 'metadata.tag, text.verbosity', 'metadata.tag']);
  });

  it('messages -> responses: stop_sequences named; messages -> messages: top_k carried', async () => {
    const toResponses = await send('messages', 'responses', { ...messagesBase, stop_sequences: ['END'] });
    expect(toResponses.dropped).toBe('stop_sequences');
    expect(toResponses.upstream).not.toHaveProperty('stop_sequences');
    const toMessages = await send('messages', 'messages', { ...messagesBase, top_k: 5, stop_sequences: ['END'] });
    expect(toMessages.upstream).toMatchObject({ top_k: 5, stop_sequences: ['END'] });
    expect(toMessages.dropped).toBeNull();
  });

  it('chat -> gemini: stop, seed, sampling, effort, tool choice and max tokens in generationConfig; user named', async () => {
    const body = {
      ...chatBase,
      stop: 'END',
      seed: 7,
      temperature: 0.3,
      top_p: 0.5,
      max_completion_tokens: 300,
      reasoning_effort: 'low',
      tool_choice: { type: 'function', function: { name: 'weather' } },
      user: 'u-1',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Weather?' },
      ],
    };
    const { status, dropped, upstream } = await send('chat', 'gemini', body);
    expect(status).toBe(200);
    expect(upstream).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'Weather?' }] }],
      systemInstruction: { parts: [{ text: 'Be brief.' }] },
      tools: [{ functionDeclarations: [{ name: 'weather', parametersJsonSchema: TOOL_SCHEMA }] }],
      toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['weather'] } },
      generationConfig: {
        maxOutputTokens: 300,
        temperature: 0.3,
        topP: 0.5,
        stopSequences: ['END'],
        seed: 7,
        thinkingConfig: { includeThoughts: true, thinkingBudget: 2048 },
      },
    });
    expect(dropped).toBe('user');
  });

  it('gemini -> chat and messages: generationConfig, thinkingConfig, toolConfig, systemInstruction; the rest named', async () => {
    const body = {
      ...geminiBase,
      systemInstruction: { parts: [{ text: 'Be brief.' }] },
      toolConfig: { functionCallingConfig: { mode: 'ANY' } },
      generationConfig: {
        temperature: 0.2,
        topP: 0.9,
        topK: 4,
        maxOutputTokens: 50,
        stopSequences: ['END'],
        seed: 3,
        thinkingConfig: { thinkingBudget: 8000 },
        candidateCount: 1,
      },
      safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_NONE' }],
    };
    const toChat = await send('gemini', 'chat', body);
    expect(toChat.status).toBe(200);
    expect(toChat.upstream).toMatchObject({
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Weather?' },
      ],
      tool_choice: 'required',
      temperature: 0.2,
      top_p: 0.9,
      max_tokens: 50,
      stop: ['END'],
      seed: 3,
      reasoning_effort: 'medium',
    });
    expect(toChat.dropped).toBe('safetySettings, generationConfig.candidateCount, generationConfig.topK');
    const toMessages = await send('gemini', 'messages', body);
    expect(toMessages.upstream).toMatchObject({ top_k: 4, stop_sequences: ['END'], tool_choice: { type: 'any' }, system: 'Be brief.' });
    expect(toMessages.dropped).toBe('safetySettings, generationConfig.candidateCount, generationConfig.seed');
    const answer = toMessages.json as { candidates: { content: { parts: { text?: string }[] }; finishReason: string }[] };
    expect(answer.candidates[0]).toMatchObject({ content: { role: 'model', parts: [{ text: 'It is 18C in Paris.' }] }, finishReason: 'STOP' });
  });

  it('images: Gemini inlineData to a chat data URL and back; other parts named', async () => {
    const png = 'iVBORw0KGgo=';
    const toChat = await send('gemini', 'chat', {
      contents: [
        {
          role: 'user',
          parts: [{ text: 'What is this?' }, { inlineData: { mimeType: 'image/png', data: png } }, { fileData: { fileUri: 'gs://b/f.pdf' } }],
        },
      ],
    });
    expect(toChat.upstream).toMatchObject({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } },
          ],
        },
      ],
    });
    expect(toChat.dropped).toBe('contents[].parts[].fileData');
    const toGemini = await send('chat', 'gemini', {
      model: 'm',
      messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } }] }],
    });
    expect(toGemini.upstream).toMatchObject({ contents: [{ role: 'user', parts: [{ inlineData: { mimeType: 'image/png', data: png } }] }] });
  });

  it('onUnsupported: refuse answers a 400 naming the field, and the upstream is not called', async () => {
    const { status, json, upstream } = await send('chat', 'responses', { ...chatBase, stop: 'END' }, 'refuse');
    expect(status).toBe(400);
    expect(upstream).toBeUndefined();
    expect(json).toMatchObject({ error: { type: 'invalid_request_error', param: 'stop' } });
    const fine = await send('chat', 'responses', { ...chatBase }, 'refuse');
    expect(fine.status).toBe(200);
  });
});

describe('structured output reaches every upstream', () => {
  const Weather = z.object({ city: z.string(), celsius: z.number() });

  it.each(PROTOCOLS)('openai-node chat.completions.parse(zodResponseFormat) through a %s upstream', async (upstream) => {
    const gateway = await gatewayFor(upstream);
    const openai = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'sk-gateway', maxRetries: 0 });
    const completion = await openai.chat.completions.parse({
      model: 'm',
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
      response_format: zodResponseFormat(Weather, 'weather'),
    });
    expect(completion.choices[0]?.message.parsed).toEqual(WEATHER);
    const sent = modelOf(upstream).requests.at(-1)?.body as Record<string, unknown>;
    const schema = { type: 'object', properties: { city: { type: 'string' }, celsius: { type: 'number' } } };
    if (upstream === 'chat')
      expect(sent.response_format).toMatchObject({ type: 'json_schema', json_schema: { name: 'weather', strict: true, schema } });
    if (upstream === 'responses') expect(sent.text).toMatchObject({ format: { type: 'json_schema', name: 'weather', schema } });
    if (upstream === 'messages') expect(sent.output_config).toMatchObject({ format: { type: 'json_schema', schema } });
    if (upstream === 'gemini')
      expect(sent.generationConfig).toMatchObject({ responseMimeType: 'application/json', responseJsonSchema: schema });
  });

  it('Gemini responseJsonSchema reaches a chat upstream as response_format', async () => {
    const schema = { type: 'object', properties: { city: { type: 'string' } } };
    const body = { ...geminiBase, generationConfig: { responseMimeType: 'application/json', responseJsonSchema: schema } };
    const { upstream, dropped, json } = await send('gemini', 'chat', body);
    expect(upstream).toMatchObject({ response_format: { type: 'json_schema', json_schema: { name: 'output', schema } } });
    expect(dropped).toBeNull();
    const answer = json as { candidates: { content: { parts: { text: string }[] } }[] };
    expect(JSON.parse(answer.candidates[0]?.content.parts[0]?.text ?? '')).toEqual(WEATHER);
  });

  it.each(PROTOCOLS)('openai-node responses.parse(zodTextFormat) through a %s upstream', async (upstream) => {
    const gateway = await gatewayFor(upstream);
    const openai = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'sk-gateway', maxRetries: 0 });
    const response = await openai.responses.parse({
      model: 'm',
      input: 'Weather in Paris?',
      text: { format: zodTextFormat(Weather, 'weather') },
    });
    expect(response.output_parsed).toEqual(WEATHER);
  });

  it('Messages output_config.format reaches a chat upstream as response_format; json_object to Messages is named', async () => {
    const schema = { type: 'object', properties: { city: { type: 'string' } } };
    const { upstream, dropped } = await send('messages', 'chat', { ...messagesBase, output_config: { format: { type: 'json_schema', schema } } });
    expect(upstream).toMatchObject({ response_format: { type: 'json_schema', json_schema: { name: 'output', schema } } });
    expect(dropped).toBeNull();
    const jsonMode = await send('chat', 'messages', { ...chatBase, response_format: { type: 'json_object' } });
    expect(jsonMode.dropped).toBe('response_format');
    expect(jsonMode.upstream).not.toHaveProperty('output_config');
  });
});
