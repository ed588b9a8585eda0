/**
 * A streaming agent: a question that needs two tools, answered by the tool loop, printed live.
 *
 * It always starts the scripted model of @ai4ts/testing on 127.0.0.1 (real SSE: reasoning, fragmented parallel
 * tool calls, text), so it runs offline and costs nothing, whatever keys the shell holds. With `--live` (or
 * `AI4TS_LIVE=1`) the same code talks to a real provider instead: `AI4TS_PROVIDER` (default openai) with that
 * provider's key, and `AI4TS_MODEL` for a non-default model; it says which before the first request.
 *
 * The same loop runs over any of the three protocols: `--protocol=chat` (default), `--protocol=responses` or
 * `--protocol=messages` (or `AI4TS_PROTOCOL`). Only the request's own fields differ; events and result are the same.
 *
 *   npx tsx examples/agent.ts --protocol=messages
 */
import { agentQuestion, agentScript, type MockModel, startMockModel } from '@ai4ts/testing';
import { type Ai4tsOptions, createClient, PROVIDERS, type ProviderName, resolveProvider } from 'ai4ts';
import { convertTemperature, getWeather } from './tools.ts';

const DEFAULT_MODELS: Record<string, string> = { openai: 'gpt-4o-mini', deepseek: 'deepseek-chat' };

/** A wrong flag or setting: one line and status 2, as a command line tool says it (no stack trace). */
function usageError(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(2);
}

/** The real provider the environment names; only asked for with `--live`. */
function liveProvider(): { options: Ai4tsOptions; model: string } {
  const name = process.env.AI4TS_PROVIDER ?? 'openai';
  if (!isProviderName(name)) usageError(`Unknown provider "${name}": use one of ${Object.keys(PROVIDERS).join(', ')}`);
  const preset = resolveProvider(name);
  // A local server (ollama, vLLM) may need no key; a hosted provider does.
  const keyless = preset.apiKeyEnv.length === 0 || preset.apiKeyOptional === true;
  if (!keyless && !preset.apiKeyEnv.some((key) => process.env[key])) {
    usageError(`--live needs a key for ${name}: set ${preset.apiKeyEnv.join(' or ')}`);
  }
  const model = process.env.AI4TS_MODEL ?? DEFAULT_MODELS[name];
  if (!model) usageError(`Set AI4TS_MODEL to the ${name} model to use`);
  return { options: { provider: name }, model };
}

function isProviderName(name: string): name is ProviderName {
  return Object.hasOwn(PROVIDERS, name);
}

/** The arguments as the model meant them: `{"city":"Zürich"}`, not the `\u00fc` escapes some models send. */
function decoded(args: string): string {
  try {
    return JSON.stringify(JSON.parse(args));
  } catch {
    return args;
  }
}

const PROTOCOLS = ['chat', 'responses', 'messages'] as const;
type Protocol = (typeof PROTOCOLS)[number];
const asked = process.argv.find((arg) => arg.startsWith('--protocol='))?.slice('--protocol='.length);
const chosen = asked ?? process.env.AI4TS_PROTOCOL ?? 'chat';
const isProtocol = (name: string): name is Protocol => PROTOCOLS.some((protocol) => protocol === name);
if (!isProtocol(chosen)) usageError(`Unknown protocol "${chosen}": use ${PROTOCOLS.join(', ')}`);
const protocol: Protocol = chosen;

const live = process.argv.includes('--live') || process.env.AI4TS_LIVE === '1';
const real = live ? liveProvider() : undefined;
let server: MockModel | undefined;
if (!real) server = await startMockModel({ script: agentScript });
const client = createClient(real?.options ?? { baseURL: server?.baseURL, apiKey: 'local-demo' });
console.log(
  real
    ? `Live: provider ${client.transport.provider.name}, model ${real.model} (real requests, billed by the provider)`
    : `Scripted model at ${server?.baseURL} (offline; --live for a real provider)`,
);
console.log(`Protocol: ${protocol}`);
console.log(`\nQuestion: ${agentQuestion}`);

try {
  const model = real?.model ?? 'mock-model';
  const tools = [getWeather, convertTemperature];
  const question = { role: 'user' as const, content: agentQuestion };
  const stream =
    protocol === 'responses'
      ? client.responses.stream({ model, input: agentQuestion, tools, maxSteps: 5 })
      : protocol === 'messages'
        ? client.messages.stream({ model, max_tokens: 1024, messages: [question], tools, maxSteps: 5 })
        : client.chat.stream({ model, messages: [question], tools, maxSteps: 5 });

  // Streamed text continues its section; each tool call and result gets its own line.
  let section = '';
  const write = (name: string, text: string) => {
    if (section !== name) process.stdout.write(`\n  [${name}] `);
    section = name;
    process.stdout.write(text);
  };
  const line = (name: string, text: string) => {
    section = '';
    process.stdout.write(`\n  [${name}] ${text}`);
  };
  for await (const event of stream) {
    if (event.type === 'step.start') {
      section = '';
      process.stdout.write(`\n\n── step ${event.step} ──`);
    } else if (event.type === 'reasoning') write('reasoning', event.delta);
    else if (event.type === 'content') write('answer', event.delta);
    else if (event.type === 'tool_call.done') line('tool call', `${event.name}(${decoded(event.arguments)})`);
    else if (event.type === 'tool.result') {
      const output = typeof event.output === 'string' ? event.output : JSON.stringify(event.output);
      line(`${event.name} ->`, `${event.isError ? 'ERROR ' : ''}${output}`);
    }
  }

  const result = await stream.final();
  console.log('\n\n── summary ──');
  for (const step of result.steps) {
    const calls = step.toolCalls.map((call) => call.name).join(', ') || 'none';
    console.log(`step ${step.step}: finish ${step.finishReason}, tools: ${calls}, tokens: ${step.usage?.total_tokens ?? '?'}`);
  }
  const usage = result.usage;
  console.log(
    `total: ${result.steps.length} steps, finish ${result.finishReason}, ` +
      `tokens ${usage?.prompt_tokens ?? '?'} in + ${usage?.completion_tokens ?? '?'} out = ${usage?.total_tokens ?? '?'}`,
  );
} finally {
  await server?.close();
}
