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
 */
import type { ChatMessage, ChatRequestBody, MockTurn } from './chat.js';

/** The question the agent demo asks. */
export const agentQuestion =
  'What is the weather in Paris and in Zürich right now, and how warm is the warmer city in Fahrenheit?';

const CITIES = ['Paris', 'Zürich'] as const;

/** Answers the weather question in three steps, reading the tool results from the request it receives. */
export function agentScript(body: ChatRequestBody): MockTurn {
  const results = toolResults(body.messages);
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

/** The tool results since the last user message, each joined to the call it answers. */
function toolResults(messages: readonly ChatMessage[]): ToolResultMessage[] {
  const lastUser = messages.findLastIndex((m) => m.role === 'user');
  const calls = new Map<string, { name: string; args: Record<string, unknown> }>();
  const results: ToolResultMessage[] = [];
  for (const message of messages.slice(lastUser + 1)) {
    for (const call of message.tool_calls ?? []) calls.set(call.id, { name: call.function.name, args: parseArgs(call.function.arguments) });
    const call = message.role === 'tool' && message.tool_call_id ? calls.get(message.tool_call_id) : undefined;
    if (call) results.push({ ...call, content: typeof message.content === 'string' ? message.content : JSON.stringify(message.content) });
  }
  return results;
}

function parseArgs(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** The number a tool result holds: `temperature`/`value`/`fahrenheit`/`result` of a JSON object, or the first number in the text. */
function numberIn(content: string): number | undefined {
  try {
    const value: unknown = JSON.parse(content);
    if (typeof value === 'number') return value;
    if (typeof value === 'object' && value !== null) {
      if ('error' in value) return undefined;
      for (const key of ['temperature', 'celsius', 'fahrenheit', 'value', 'result']) {
        const field = (value as Record<string, unknown>)[key];
        if (typeof field === 'number') return field;
      }
    }
  } catch {
    // Plain text: fall through to the first number in it.
  }
  const match = /-?\d+(?:\.\d+)?/.exec(content);
  return match ? Number(match[0]) : undefined;
}
