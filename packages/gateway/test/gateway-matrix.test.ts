/**
 * The matrix: each inbound protocol, spoken by a real client nobody here wrote (the official `openai` client for
 * Chat Completions and Responses, the official `@anthropic-ai/sdk` for Messages, Google's `@google/genai` for Gemini,
 * the Vercel AI SDK's OpenAI Responses and Anthropic providers), through the gateway, to @ai4ts/testing's scripted
 * model speaking each upstream protocol (a Gemini upstream: gemini.test.ts).
 * Every cell: reasoning, two parallel client tool calls with their ids kept, the results sent back, the answer, usage,
 * and an in-stream error that the client raises.
 */
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import Anthropic from '@anthropic-ai/sdk';
import { type GatewayProtocol, type ListeningGateway, listenGateway } from '@ai4ts/gateway';
import { type Content, GoogleGenAI, type Part } from '@google/genai';
import { type MockModel, type MockRequestBody, type MockScriptContext, type MockTurn, startMockModel } from '@ai4ts/testing';
import { jsonSchema, stepCountIs, streamText, tool } from 'ai';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const PROTOCOLS: GatewayProtocol[] = ['chat', 'responses', 'messages'];
const USAGE = { prompt_tokens: 31, completion_tokens: 17, total_tokens: 48 };
const ANSWER = 'Paris has 18C and Tokyo 22C.';
const REASONING = 'Two cities: call the tool twice.';
const CITIES: Record<string, string> = { Paris: '18C', Tokyo: '22C' };
const WEATHER_SCHEMA = { type: 'object' as const, properties: { city: { type: 'string' as const } }, required: ['city'] };

/** The tool results a request carries, by call id, whichever protocol it is in. */
function toolResults(context: MockScriptContext): Map<string, string> {
  const results = new Map<string, string>();
  const text = (value: unknown): string =>
    typeof value === 'string'
      ? value
      : Array.isArray(value)
        ? value.map((part) => (typeof part === 'object' && part && 'text' in part ? String(part.text) : '')).join('')
        : JSON.stringify(value);
  if (context.protocol === 'chat')
    for (const message of context.body.messages)
      if (message.role === 'tool') results.set(String(message.tool_call_id), text(message.content));
  if (context.protocol === 'responses' && Array.isArray(context.body.input))
    for (const item of context.body.input)
      if (item.type === 'function_call_output') results.set(String(item.call_id), text(item.output));
  if (context.protocol === 'messages')
    for (const message of context.body.messages)
      if (Array.isArray(message.content))
        for (const block of message.content)
          if (block.type === 'tool_result') results.set(String(block.tool_use_id), text(block.content));
  return results;
}

interface Upstream {
  model: MockModel;
  gateway: ListeningGateway;
  /** The ids the model gave its calls, and the results that came back for them. */
  calls: string[][];
  results: Map<string, string>[];
}

/** The scripted model: `fail` streams an error after some text; else calls the tool twice, then answers. */
function script(upstream: Pick<Upstream, 'calls' | 'results'>) {
  return (body: MockRequestBody, context: MockScriptContext): MockTurn => {
    if (JSON.stringify(body).includes('please fail')) return { content: 'Partial answer', streamError: { message: 'model overloaded' } };
    const results = toolResults(context);
    if (results.size > 0) {
      upstream.results.push(results);
      return { content: ANSWER, usage: USAGE };
    }
    const ids = [`call_paris_${context.step}`, `call_tokyo_${context.step}`];
    upstream.calls.push(ids);
    return {
      reasoning: REASONING,
      toolCalls: [
        { id: ids[0], name: 'get_weather', arguments: { city: 'Paris' } },
        { id: ids[1], name: 'get_weather', arguments: { city: 'Tokyo' } },
      ],
      usage: USAGE,
    };
  };
}

const upstreams = new Map<GatewayProtocol, Upstream>();
// The AI SDK warns on stderr about the unknown model's token limit; the tests pass maxOutputTokens where it matters.
Reflect.set(globalThis, 'AI_SDK_LOG_WARNINGS', false);

beforeAll(async () => {
  for (const protocol of PROTOCOLS) {
    const state = { calls: [], results: [] };
    const model = await startMockModel({ script: script(state), seed: 7 });
    const gateway = await listenGateway({ upstream: model.baseURL, upstreamProtocol: protocol, auth: 'sk-gateway', upstreamToken: 'sk-upstream-key' });
    upstreams.set(protocol, { model, gateway, ...state });
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

/** The last turn's calls and the results the model received for them: every id kept, every result for its city. */
function expectRoundTrip(upstream: Upstream, seenIds: string[]) {
  const ids = upstream.calls.at(-1);
  expect(seenIds).toEqual(ids);
  const results = upstream.results.at(-1);
  expect([...(results?.keys() ?? [])].sort()).toEqual([...(ids ?? [])].sort());
  expect(results?.get(ids?.[0] ?? '')).toContain('18C');
  expect(results?.get(ids?.[1] ?? '')).toContain('22C');
}

const weather = (args: string): string => {
  const { city } = JSON.parse(args) as { city: string };
  return `${city}: ${CITIES[city]}`;
};

describe.each(PROTOCOLS)('to a %s upstream', (upstreamProtocol) => {
  const openai = () =>
    new OpenAI({ baseURL: `${upstreamOf(upstreamProtocol).gateway.url}/v1`, apiKey: 'sk-gateway', maxRetries: 0 });
  const anthropic = () =>
    new Anthropic({ baseURL: upstreamOf(upstreamProtocol).gateway.url, apiKey: 'sk-gateway', maxRetries: 0 });

  it('chat completions (openai client): reasoning, two parallel calls, results, answer, usage', async () => {
    const upstream = upstreamOf(upstreamProtocol);
    const client = openai();
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather in Paris and Tokyo?' }];
    const tools: OpenAI.ChatCompletionTool[] = [
      { type: 'function', function: { name: 'get_weather', parameters: WEATHER_SCHEMA } },
    ];
    const stream = client.chat.completions.stream({ model: 'm', messages, tools, stream_options: { include_usage: true } });
    let reasoning = '';
    stream.on('chunk', (chunk) => {
      const delta = chunk.choices[0]?.delta as { reasoning_content?: string } | undefined;
      reasoning += delta?.reasoning_content ?? '';
    });
    const first = await stream.finalChatCompletion();
    expect(reasoning).toBe(REASONING);
    const calls = first.choices[0]?.message.tool_calls ?? [];
    expect(first.choices[0]?.finish_reason).toBe('tool_calls');
    expect(first.usage).toMatchObject({ prompt_tokens: 31, completion_tokens: 17 });
    const functionCalls = calls.flatMap((call) => (call.type === 'function' ? [call] : []));
    messages.push(first.choices[0]?.message as OpenAI.ChatCompletionMessageParam);
    for (const call of functionCalls) messages.push({ role: 'tool', tool_call_id: call.id, content: weather(call.function.arguments) });
    const second = await client.chat.completions.create({ model: 'm', messages, tools });
    expectRoundTrip(upstream, functionCalls.map((call) => call.id));
    expect(second.choices[0]?.message.content).toBe(ANSWER);
    expect(second.usage).toMatchObject({ prompt_tokens: 31, completion_tokens: 17, total_tokens: 48 });
  });

  it('responses (openai client): reasoning, two parallel calls, results, answer, usage', async () => {
    const upstream = upstreamOf(upstreamProtocol);
    const client = openai();
    const tools: OpenAI.Responses.Tool[] = [
      { type: 'function', name: 'get_weather', parameters: WEATHER_SCHEMA, strict: false },
    ];
    const input: OpenAI.Responses.ResponseInput = [{ role: 'user', content: 'Weather in Paris and Tokyo?' }];
    const stream = client.responses.stream({ model: 'm', input, tools });
    let reasoning = '';
    stream.on('response.reasoning_summary_text.delta', (event) => {
      reasoning += event.delta;
    });
    const first = await stream.finalResponse();
    expect(reasoning).toBe(REASONING);
    expect(first.usage).toMatchObject({ input_tokens: 31, output_tokens: 17, total_tokens: 48 });
    const calls = first.output.flatMap((item) => (item.type === 'function_call' ? [item] : []));
    for (const item of first.output) if (item.type === 'function_call') input.push(item);
    for (const call of calls) input.push({ type: 'function_call_output', call_id: call.call_id, output: weather(call.arguments) });
    const second = await client.responses.create({ model: 'm', input, tools });
    expectRoundTrip(upstream, calls.map((call) => call.call_id));
    expect(second.output_text).toBe(ANSWER);
    expect(second.usage).toMatchObject({ input_tokens: 31, output_tokens: 17 });
  });

  it('messages (@anthropic-ai/sdk): thinking, two parallel tool_use blocks, results, answer, usage', async () => {
    const upstream = upstreamOf(upstreamProtocol);
    const client = anthropic();
    const tools: Anthropic.Tool[] = [{ name: 'get_weather', input_schema: WEATHER_SCHEMA }];
    const messages: Anthropic.MessageParam[] = [{ role: 'user', content: 'Weather in Paris and Tokyo?' }];
    const stream = client.messages.stream({ model: 'm', max_tokens: 1024, messages, tools });
    let thinking = '';
    stream.on('thinking', (delta) => {
      thinking += delta;
    });
    const first = await stream.finalMessage();
    expect(thinking).toBe(REASONING);
    expect(first.stop_reason).toBe('tool_use');
    expect(first.usage).toMatchObject({ input_tokens: 31, output_tokens: 17 });
    const uses = first.content.flatMap((block) => (block.type === 'tool_use' ? [block] : []));
    messages.push({ role: 'assistant', content: first.content });
    messages.push({
      role: 'user',
      content: uses.map((use) => ({ type: 'tool_result', tool_use_id: use.id, content: weather(JSON.stringify(use.input)) })),
    });
    const second = await client.messages.create({ model: 'm', max_tokens: 1024, messages, tools });
    expectRoundTrip(upstream, uses.map((use) => use.id));
    expect(second.content).toEqual([{ type: 'text', text: ANSWER }]);
    expect(second.usage).toMatchObject({ input_tokens: 31, output_tokens: 17 });
  });

  it('gemini (@google/genai): thoughts, two parallel calls, results, answer, usage', async () => {
    const upstream = upstreamOf(upstreamProtocol);
    const client = new GoogleGenAI({ apiKey: 'sk-gateway', httpOptions: { baseUrl: upstream.gateway.url } });
    const config = { tools: [{ functionDeclarations: [{ name: 'get_weather', parametersJsonSchema: WEATHER_SCHEMA }] }] };
    const contents: Content[] = [{ role: 'user', parts: [{ text: 'Weather in Paris and Tokyo?' }] }];
    const parts: Part[] = [];
    let usage: unknown;
    for await (const chunk of await client.models.generateContentStream({ model: 'm', contents, config })) {
      parts.push(...(chunk.candidates?.[0]?.content?.parts ?? []));
      usage = chunk.usageMetadata ?? usage;
    }
    expect(parts.filter((part) => part.thought).map((part) => part.text).join('')).toBe(REASONING);
    expect(usage).toMatchObject({ promptTokenCount: 31, candidatesTokenCount: 17, totalTokenCount: 48 });
    const calls = parts.flatMap((part) => (part.functionCall ? [part.functionCall] : []));
    const responses = calls.map((call) => ({
      functionResponse: { id: call.id, name: call.name, response: { output: weather(JSON.stringify(call.args)) } },
    }));
    contents.push({ role: 'model', parts }, { role: 'user', parts: responses });
    const second = await client.models.generateContent({ model: 'm', contents, config });
    expectRoundTrip(upstream, calls.map((call) => call.id ?? ''));
    expect(second.text).toBe(ANSWER);
    expect(second.usageMetadata).toMatchObject({ promptTokenCount: 31, totalTokenCount: 48 });
  });

  const aiTools = {
    get_weather: tool({
      inputSchema: jsonSchema<{ city: string }>(WEATHER_SCHEMA),
      execute: async ({ city }) => `${city}: ${CITIES[city]}`,
    }),
  };

  it.each([
    ['Vercel AI SDK, OpenAI Responses provider', 'responses'],
    ['Vercel AI SDK, Anthropic provider', 'messages'],
  ] as const)('%s: runs its own tool loop through the gateway', async (_name, inbound) => {
    const upstream = upstreamOf(upstreamProtocol);
    const baseURL = `${upstream.gateway.url}/v1`;
    const model =
      inbound === 'responses'
        ? createOpenAI({ baseURL, apiKey: 'sk-gateway' }).responses('m')
        : createAnthropic({ baseURL, apiKey: 'sk-gateway' })('m');
    const result = streamText({ model, prompt: 'Weather in Paris and Tokyo?', tools: aiTools, stopWhen: stepCountIs(3) });
    expect(await result.text).toBe(ANSWER);
    const steps = await result.steps;
    expect(steps[0]?.reasoningText).toBe(REASONING);
    const ids = steps[0]?.toolCalls.map((call) => call.toolCallId) ?? [];
    expectRoundTrip(upstream, ids);
    expect((await result.totalUsage).inputTokens).toBe(62);
    expect((await result.totalUsage).outputTokens).toBe(34);
  });

  it('every client raises an in-stream error after output began', async () => {
    const content = 'Weather? please fail';
    const chat = await openai().chat.completions.create({ model: 'm', messages: [{ role: 'user', content }], stream: true });
    await expect(
      (async () => {
        for await (const _chunk of chat);
      })(),
    ).rejects.toThrow(/model overloaded/);
    await expect(openai().responses.stream({ model: 'm', input: content }).finalResponse()).rejects.toThrow(/model overloaded/);
    await expect(
      anthropic().messages.stream({ model: 'm', max_tokens: 100, messages: [{ role: 'user', content }] }).finalMessage(),
    ).rejects.toThrow(/model overloaded/);
    const genai = new GoogleGenAI({ apiKey: 'sk-gateway', httpOptions: { baseUrl: upstreamOf(upstreamProtocol).gateway.url } });
    await expect(
      (async () => {
        for await (const _chunk of await genai.models.generateContentStream({ model: 'm', contents: content }));
      })(),
    ).rejects.toThrow(/model overloaded/);
    const ai = streamText({
      model: createAnthropic({ baseURL: `${upstreamOf(upstreamProtocol).gateway.url}/v1`, apiKey: 'sk-gateway' })('m'),
      prompt: content,
    });
    const errors: unknown[] = [];
    for await (const part of ai.fullStream) if (part.type === 'error') errors.push(part.error);
    expect(String(errors[0] instanceof Error ? errors[0].message : JSON.stringify(errors[0]))).toMatch(/model overloaded/);
  });
});
