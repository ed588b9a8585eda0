/**
 * The scripted agent behind `npm start`: a question that takes two tools and three model requests.
 *
 * 1. It reasons, then calls `get_weather` for Paris and Zürich in parallel.
 * 2. It reads both results from the tool messages, picks the warmer city and calls `convert_temperature`.
 * 3. It answers from the tool results it finds in the request.
 *
 * The host defines the tools: `get_weather({ city })` returning JSON with a Celsius `temperature` (or any text
 * holding a number), and `convert_temperature({ value, from: 'celsius', to: 'fahrenheit' })` returning the
 * converted number (or JSON/text holding it). A tool error reaches the answer as such.
 *
 * It speaks all three protocols: tool results are read from Chat `tool` messages, Responses
 * `function_call_output` items or Messages `tool_result` blocks, whichever route was called.
 */
import { type ChatMessage, isChatBody } from './chat.js';
import type { GeminiContent, GeminiPart } from './gemini.js';
import type { MessagesInputMessage } from './messages.js';
import type { ResponsesInputItem } from './responses.js';
import type { MockRequestBody, MockScriptContext } from './server.js';
import { isRecord, type MockTurn } from './turn.js';

/** The question the agent demo asks. */
export const agentQuestion =
  'What is the weather in Paris and in Zürich right now, and how warm is the warmer city in Fahrenheit?';

const CITIES = ['Paris', 'Zürich'] as const;

/**
 * Answers the weather question in three steps, reading the tool results from the request it receives. Without a
 * context (a direct call), the body is read as Chat Completions.
 */
export function agentScript(body: MockRequestBody, context?: MockScriptContext): MockTurn {
  const results = context ? toolResultsOf(context) : isChatBody(body) ? chatToolResults(body.messages) : [];
  const weather = results.filter((r) => r.name === 'get_weather');
  const conversion = results.find((r) => r.name === 'convert_temperature');

  if (weather.length === 0)
    return {
      reasoning:
        'The user asks about two cities. I need the current weather for both, and the two lookups do not depend ' +
        'on each other, so I will call get_weather for Paris and Zürich in parallel.',
      toolCalls: CITIES.map((city) => ({ name: 'get_weather', arguments: { city } })),
    };

  const readings = weather.map((r) => ({ city: String(r.args.city ?? '?'), result: r, celsius: numberIn(r.content) }));
  const known = readings.filter((r): r is typeof r & { celsius: number } => r.celsius !== undefined);
  const warmest = known.reduce<(typeof known)[number] | undefined>(
    (best, r) => (best === undefined || r.celsius > best.celsius ? r : best),
    undefined,
  );
  const summary = readings
    .map((r) => (r.celsius === undefined ? `${r.city}: no reading (${r.result.content})` : `${r.city}: ${r.celsius} °C`))
    .join(', ');

  if (!conversion && warmest)
    return {
      reasoning: `I have the readings: ${summary}. ${warmest.city} is the warmer one. The user wants Fahrenheit, so I will convert ${warmest.celsius} °C with convert_temperature instead of doing the arithmetic myself.`,
      toolCalls: [
        { name: 'convert_temperature', arguments: { value: warmest.celsius, from: 'celsius', to: 'fahrenheit' } },
      ],
    };

  const fahrenheit = conversion && numberIn(conversion.content);
  const answer = warmest
    ? `Right now it is ${summary}. The warmer city is ${warmest.city} at ${warmest.celsius} °C, which is ` +
      (fahrenheit === undefined ? `(the conversion failed: ${conversion?.content})` : `${fahrenheit} °F`) +
      '.'
    : `I could not get a temperature reading: ${summary}.`;
  return { reasoning: 'I have everything I need; time to answer.', content: answer };
}

interface ToolResultMessage {
  name: string;
  args: Record<string, unknown>;
  content: string;
}

function toolResultsOf(context: MockScriptContext): ToolResultMessage[] {
  if (context.protocol === 'chat') return chatToolResults(context.body.messages);
  if (context.protocol === 'responses') return responsesToolResults(context.body.input);
  if (context.protocol === 'gemini') return geminiToolResults(context.body.contents);
  return messagesToolResults(context.body.messages);
}

/**
 * The `functionResponse` parts since the user's last question, each joined to the `functionCall` it answers (by id
 * when both have one, else the next unanswered call of its name in the model turn before it).
 */
function geminiToolResults(contents: readonly GeminiContent[]): ToolResultMessage[] {
  const lastUser = contents.findLastIndex((c) => c.role !== 'model' && c.parts.some((part) => part.functionResponse === undefined));
  const results: ToolResultMessage[] = [];
  let calls: NonNullable<GeminiPart['functionCall']>[] = [];
  for (const content of contents.slice(lastUser + 1)) {
    if (content.role === 'model') calls = content.parts.flatMap((part) => (part.functionCall ? [part.functionCall] : []));
    for (const part of content.parts) {
      const response = part.functionResponse;
      if (!response) continue;
      const at = calls.findIndex((call) => call.name === response.name && (response.id === undefined || call.id === response.id));
      const call = calls[at];
      if (!call) continue;
      calls.splice(at, 1);
      const output = isRecord(response.response) ? (response.response.output ?? response.response.error) : response.response;
      results.push({ name: call.name, args: call.args ?? {}, content: textOf(output) });
    }
  }
  return results;
}

/** The tool results since the last user message, each joined to the call it answers. */
function chatToolResults(messages: readonly ChatMessage[]): ToolResultMessage[] {
  const lastUser = messages.findLastIndex((m) => m.role === 'user');
  const calls = new Map<string, { name: string; args: Record<string, unknown> }>();
  const results: ToolResultMessage[] = [];
  for (const message of messages.slice(lastUser + 1)) {
    for (const call of message.tool_calls ?? []) calls.set(call.id, { name: call.function.name, args: parseArgs(call.function.arguments) });
    const call = message.role === 'tool' && message.tool_call_id ? calls.get(message.tool_call_id) : undefined;
    if (call) results.push({ ...call, content: textOf(message.content) });
  }
  return results;
}

/** The `function_call_output` items since the last user item, each joined to its `function_call`. */
function responsesToolResults(input: string | readonly ResponsesInputItem[]): ToolResultMessage[] {
  if (typeof input === 'string') return [];
  const lastUser = input.findLastIndex((item) => item.role === 'user');
  const calls = new Map<string, { name: string; args: Record<string, unknown> }>();
  const results: ToolResultMessage[] = [];
  for (const item of input.slice(lastUser + 1)) {
    if (item.type === 'function_call' && item.call_id && item.name)
      calls.set(item.call_id, { name: item.name, args: parseArgs(item.arguments ?? '') });
    const call = item.type === 'function_call_output' && item.call_id ? calls.get(item.call_id) : undefined;
    if (call) results.push({ ...call, content: textOf(item.output) });
  }
  return results;
}

/** The `tool_result` blocks since the user's last question, each joined to its `tool_use` block. */
function messagesToolResults(messages: readonly MessagesInputMessage[]): ToolResultMessage[] {
  // Tool results travel in user messages too; the question is the last user message that is not only results.
  const lastUser = messages.findLastIndex(
    (m) => m.role === 'user' && (typeof m.content === 'string' || m.content.some((block) => block.type !== 'tool_result')),
  );
  const calls = new Map<string, { name: string; args: Record<string, unknown> }>();
  const results: ToolResultMessage[] = [];
  for (const message of messages.slice(lastUser + 1)) {
    if (typeof message.content === 'string') continue;
    for (const block of message.content) {
      if (block.type === 'tool_use' && typeof block.id === 'string' && typeof block.name === 'string')
        calls.set(block.id, { name: block.name, args: isRecord(block.input) ? block.input : {} });
      const call = block.type === 'tool_result' && typeof block.tool_use_id === 'string' ? calls.get(block.tool_use_id) : undefined;
      if (call) results.push({ ...call, content: textOf(block.content) });
    }
  }
  return results;
}

/** A tool result as text: a string, the joined `text` of content parts, or JSON. */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    const texts = content.flatMap((part) => (isRecord(part) && typeof part.text === 'string' ? [part.text] : []));
    if (texts.length === content.length) return texts.join('');
  }
  return JSON.stringify(content);
}

function parseArgs(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    return isRecord(value) ? value : {};
  } catch {
    return {};
  }
}

/** The number a tool result holds: `temperature`/`value`/`fahrenheit`/`result` of a JSON object, or the first number in the text. */
function numberIn(content: string): number | undefined {
  try {
    const value: unknown = JSON.parse(content);
    if (typeof value === 'number') return value;
    if (isRecord(value)) {
      if ('error' in value) return undefined;
      for (const key of ['temperature', 'celsius', 'fahrenheit', 'value', 'result']) {
        const field = value[key];
        if (typeof field === 'number') return field;
      }
    }
  } catch {
    // Plain text: fall through to the first number in it.
  }
  const match = /-?\d+(?:\.\d+)?/.exec(content);
  return match ? Number(match[0]) : undefined;
}
