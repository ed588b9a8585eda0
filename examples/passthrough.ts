/**
 * Passthrough: the host runs the tools itself. With `passThroughToolCalls: true` the loop stops at the first turn
 * that calls tools and hands the calls back; the host runs them (here: after asking nobody, in a real app perhaps
 * after a user's approval or on another machine) and continues with the returned `messages` plus its tool messages.
 *
 * Runs offline against the scripted model of @ai4ts/testing.
 *
 *   npx tsx examples/passthrough.ts
 */
import { agentQuestion, agentScript, startMockModel } from '@ai4ts/testing';
import { type ChatMessage, createClient, defineTool } from 'ai4ts';
import * as z from 'zod';

const server = await startMockModel({ script: agentScript });
const client = createClient({ baseURL: server.baseURL, apiKey: 'local-demo' });

// No `execute`: the tools describe themselves to the model, the host runs them.
const tools = [
  defineTool({ name: 'get_weather', parameters: z.object({ city: z.string() }) }),
  defineTool({
    name: 'convert_temperature',
    parameters: z.object({ value: z.number(), from: z.string(), to: z.string() }),
  }),
];

/** The host's own tool runner. */
function runLocally(name: string, args: Record<string, unknown>): string {
  if (name === 'get_weather') return JSON.stringify({ city: args.city, temperature: args.city === 'Paris' ? 18 : 21 });
  if (name === 'convert_temperature') return String((Number(args.value) * 9) / 5 + 32);
  return JSON.stringify({ error: `unknown tool ${name}` });
}

try {
  let messages: ChatMessage[] = [{ role: 'user', content: agentQuestion }];
  for (let round = 1; round <= 5; round++) {
    const result = await client.chat.create({ model: 'mock-model', messages, tools, passThroughToolCalls: true });
    if (result.finishReason !== 'tool_calls') {
      console.log(`\nAnswer: ${result.text}`);
      break;
    }
    const calls = result.steps.at(-1)?.toolCalls ?? [];
    const results: ChatMessage[] = calls.map((call) => {
      const output = runLocally(call.name, JSON.parse(call.arguments) as Record<string, unknown>);
      console.log(`round ${round}: host ran ${call.name}(${call.arguments}) -> ${output}`);
      return { role: 'tool', tool_call_id: call.id, content: output };
    });
    messages = [...result.messages, ...results];
  }
} finally {
  await server.close();
}
