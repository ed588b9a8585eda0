/** OpenAI Chat Completions as the gateway speaks it: requests read into the gateway's shape, answers, upstream calls. */
import { CHAT_PROTOCOL } from '@ai4ts/chat';
import { isRecord } from '@ai4ts/core/internal';
import { z } from 'zod';
import { type BridgeEvent, toOpenAICompletion, toOpenAISse } from '@ai4ts/bridge';
import { badRequest, parseBody } from './bad-request.js';
import {
  assistantTurn,
  cacheOf,
  carries,
  type GatewayRequest,
  marksCache,
  type Part,
  type ProtocolCodec,
  type ReasoningPart,
  type ResponseFormat,
  readSeal,
  type Seal,
  sealOf,
  sealText,
  stringOf,
  type ToolChoice,
  type ToolSpec,
  type Turn,
  uncarriedKeys,
  unknownFields,
  type WriteOptions,
} from './neutral.js';
import { readWithListener } from './read.js';

const ContentPart = z.looseObject({ type: z.string(), text: z.string().optional() });

const Message = z.looseObject({
  role: z.string(),
  content: z.union([z.string(), z.array(ContentPart)]).nullish(),
});

const FunctionTool = z.looseObject({
  type: z.literal('function'),
  function: z.looseObject({
    name: z.string().min(1),
    description: z.string().nullish(),
    parameters: z.record(z.string(), z.unknown()).nullish(),
  }),
});
/** A tool of another kind (`custom`, ...): named as dropped. */
const OtherTool = z.looseObject({ type: z.string().refine((type) => type !== 'function', { message: 'a function tool needs a function', abort: true }) });

const ToolChoiceSchema = z.union([
  z.enum(['auto', 'none', 'required']),
  z.looseObject({ type: z.literal('function'), function: z.looseObject({ name: z.string().min(1) }) }),
]);

const ResponseFormatSchema = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('text') }),
  z.looseObject({ type: z.literal('json_object') }),
  z.looseObject({
    type: z.literal('json_schema'),
    json_schema: z.looseObject({
      name: z.string().min(1),
      description: z.string().nullish(),
      schema: z.record(z.string(), z.unknown()).nullish(),
      strict: z.boolean().nullish(),
    }),
  }),
]);

/** A Chat Completions request as the gateway reads it; other OpenAI fields are named in `x-ai4ts-dropped`. */
export const ChatRequestSchema = z.looseObject({
  model: z.string().min(1),
  messages: z.array(Message).min(1, 'messages must not be empty'),
  stream: z.boolean().nullish(),
  stream_options: z.looseObject({ include_usage: z.boolean().nullish() }).nullish(),
  user: z.string().nullish(),
  metadata: z.record(z.string(), z.unknown()).nullish(),
  tools: z.array(z.union([FunctionTool, OtherTool])).nullish(),
  tool_choice: ToolChoiceSchema.nullish(),
  parallel_tool_calls: z.boolean().nullish(),
  max_tokens: z.number().int().positive().nullish(),
  max_completion_tokens: z.number().int().positive().nullish(),
  temperature: z.number().nullish(),
  top_p: z.number().nullish(),
  stop: z.union([z.string(), z.array(z.string())]).nullish(),
  seed: z.number().int().nullish(),
  n: z.number().int().positive().nullish(),
  logprobs: z.boolean().nullish(),
  top_logprobs: z.number().int().nonnegative().nullish(),
  reasoning_effort: z.string().nullish(),
  service_tier: z.string().nullish(),
  response_format: ResponseFormatSchema.nullish(),
});

/** A validated Chat Completions request. */
export type ProxyRequest = z.infer<typeof ChatRequestSchema>;

const KNOWN = new Set([
  'model',
  'messages',
  'stream',
  'stream_options',
  'user',
  'metadata',
  'tools',
  'tool_choice',
  'max_tokens',
  'max_completion_tokens',
  'temperature',
  'top_p',
  'stop',
  'reasoning_effort',
  'parallel_tool_calls',
  'seed',
  'service_tier',
  'response_format',
]);

/** The text of a content that is a string or a list of parts. */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter((part) => isRecord(part) && part.type === 'text' && typeof part.text === 'string')
    .map((part) => (isRecord(part) ? String(part.text) : ''))
    .join('\n');
}

function userParts(content: unknown, dropped: string[]): Part[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  const parts: Part[] = [];
  for (const part of Array.isArray(content) ? content : []) {
    if (!isRecord(part)) continue;
    // `cache_control` on a part: Anthropic's marker as OpenAI-compatible gateways take it (LiteLLM, OpenRouter).
    const cache = cacheOf(part.cache_control);
    if (part.type === 'text' && typeof part.text === 'string') parts.push({ type: 'text', text: part.text, ...(cache && { cache }) });
    else if (part.type === 'image_url' && isRecord(part.image_url) && typeof part.image_url.url === 'string')
      parts.push({ type: 'image', url: part.image_url.url, ...(cache && { cache }) });
    else dropped.push(`messages[].content[].${String(part.type)}`);
  }
  return parts;
}

function readTurns(messages: readonly Record<string, unknown>[], dropped: string[]) {
  const system: string[] = [];
  const turns: Turn[] = [];
  for (const message of messages) {
    switch (message.role) {
      case 'system':
      case 'developer':
        system.push(textOf(message.content));
        break;
      case 'user':
        turns.push({ role: 'user', parts: userParts(message.content, dropped) });
        break;
      case 'assistant': {
        const turn = assistantTurn(turns);
        turn.text += textOf(message.content);
        const blocks = thinkingBlocksOf(message.thinking_blocks);
        if (blocks.length) turn.reasoning.push(...blocks);
        else if (typeof message.reasoning_content === 'string' && message.reasoning_content)
          turn.reasoning.push({ text: message.reasoning_content });
        for (const call of Array.isArray(message.tool_calls) ? message.tool_calls : []) {
          if (!isRecord(call) || !isRecord(call.function)) continue;
          turn.toolCalls.push({
            id: String(call.id ?? ''),
            name: String(call.function.name ?? ''),
            arguments: typeof call.function.arguments === 'string' ? call.function.arguments : '{}',
          });
        }
        break;
      }
      case 'tool':
        turns.push({ role: 'tool', callId: String(message.tool_call_id ?? ''), output: textOf(message.content), isError: false });
        break;
      default:
        dropped.push(`messages[].role=${String(message.role)}`);
    }
  }
  return { system: system.length ? system.join('\n\n') : undefined, turns };
}

/**
 * The `thinking_blocks` vendor field of an assistant message (LiteLLM's, in Anthropic's block shapes): the reasoning
 * with its seals, which `reasoning_content` (text only) cannot carry. A signature as is is Anthropic's; another
 * vendor's is in an envelope (see neutral.ts).
 */
function thinkingBlocksOf(value: unknown): ReasoningPart[] {
  const parts: ReasoningPart[] = [];
  for (const block of Array.isArray(value) ? value.filter(isRecord) : []) {
    if (block.type === 'thinking' && typeof block.thinking === 'string') {
      const seal = typeof block.signature === 'string' ? readSeal(block.signature, 'messages') : undefined;
      parts.push({ text: block.thinking, ...(seal && { seal }) });
    } else if (block.type === 'redacted_thinking' && typeof block.data === 'string')
      parts.push({ text: '', seal: { origin: 'messages', value: block.data, redacted: true } });
  }
  return parts;
}

/** A reasoning block of the `thinking_blocks` field. */
function thinkingBlock(text: string, seal: Seal): Record<string, unknown> {
  if (seal.redacted && seal.origin === 'messages') return { type: 'redacted_thinking', data: seal.value };
  return { type: 'thinking', thinking: text, signature: sealText(seal, 'messages') };
}

/**
 * Folds an answer's sealed reasoning into `thinking_blocks` as the events go by: each seal closes the reasoning
 * before it. Reasoning without a seal is only in `reasoning_content`.
 */
class ThinkingBlocks {
  #text = '';
  readonly blocks: Record<string, unknown>[] = [];

  async *tap(events: AsyncIterable<BridgeEvent>): AsyncGenerator<BridgeEvent> {
    for await (const event of events) {
      if (event.type === 'reasoning') this.#text += event.delta;
      else if (event.type === 'reasoning.signature') {
        const seal = sealOf(event);
        this.blocks.push(thinkingBlock(seal.redacted ? '' : this.#text, seal));
        if (!seal.redacted) this.#text = '';
      }
      yield event;
    }
  }

  /** The vendor field, when the answer had sealed reasoning. */
  field(): { thinking_blocks: Record<string, unknown>[] } | undefined {
    return this.blocks.length ? { thinking_blocks: this.blocks } : undefined;
  }
}

function readTools(tools: ProxyRequest['tools'], dropped: string[]): ToolSpec[] {
  const out: ToolSpec[] = [];
  for (const tool of tools ?? []) {
    if (tool.type === 'function' && isRecord(tool.function) && typeof tool.function.name === 'string')
      out.push({
        name: tool.function.name,
        ...(typeof tool.function.description === 'string' && { description: tool.function.description }),
        parameters: isRecord(tool.function.parameters) ? tool.function.parameters : { type: 'object', properties: {} },
      });
    else dropped.push(`tools[].${tool.type}`);
  }
  return out;
}

function readToolChoice(choice: ProxyRequest['tool_choice']): ToolChoice | undefined {
  if (choice === null || choice === undefined || typeof choice === 'string') return choice ?? undefined;
  return { name: choice.function.name };
}

function readFormat(format: ProxyRequest['response_format']): ResponseFormat | undefined {
  if (!format || format.type === 'text') return undefined;
  if (format.type === 'json_object') return { type: 'json_object' };
  const { name, description, schema, strict } = format.json_schema;
  return {
    type: 'json_schema',
    name,
    schema: schema ?? { type: 'object' },
    ...(typeof strict === 'boolean' && { strict }),
    ...(typeof description === 'string' && { description }),
  };
}

/** Chat's `response_format` for a structured answer. */
export function chatResponseFormat(format: ResponseFormat): Record<string, unknown> {
  if (format.type === 'json_object') return { type: 'json_object' };
  const { name, schema, strict, description } = format;
  return {
    type: 'json_schema',
    json_schema: { name, schema, ...(strict !== undefined && { strict }), ...(description !== undefined && { description }) },
  };
}

function effortOf(value: unknown): GatewayRequest['reasoningEffort'] {
  return value === 'minimal' || value === 'low' || value === 'medium' || value === 'high' ? value : undefined;
}

function parse(json: unknown): GatewayRequest {
  const body = parseBody(ChatRequestSchema, json);
  const dropped = unknownFields(body, KNOWN);
  // `metadata` is not sent upstream: only its session id is read (for daemons).
  dropped.push(...uncarriedKeys('metadata', body.metadata, ['session_id']));
  // The gateway's answers hold one choice and no logprobs: n > 1 is named like the logprobs fields.
  if (body.n !== undefined && body.n !== null && body.n > 1) dropped.push('n');
  const { system, turns } = readTurns(body.messages, dropped);
  const tools = readTools(body.tools, dropped);
  const sessionId = stringOf(body.metadata?.session_id) ?? stringOf(body.user);
  const reasoningEffort = effortOf(body.reasoning_effort);
  if (body.reasoning_effort && !reasoningEffort) dropped.push(`reasoning_effort=${body.reasoning_effort}`);
  if (!turns.some((turn) => turn.role === 'user')) throw badRequest('messages must contain a user message', 'messages');
  return {
    protocol: 'chat',
    model: body.model,
    stream: body.stream === true,
    system,
    turns,
    tools,
    toolChoice: readToolChoice(body.tool_choice),
    maxTokens: body.max_completion_tokens ?? body.max_tokens ?? undefined,
    temperature: body.temperature ?? undefined,
    topP: body.top_p ?? undefined,
    stop: typeof body.stop === 'string' ? [body.stop] : (body.stop ?? undefined),
    seed: body.seed ?? undefined,
    topK: undefined,
    parallelToolCalls: body.parallel_tool_calls ?? undefined,
    user: body.user ?? undefined,
    serviceTier: body.service_tier ?? undefined,
    responseFormat: readFormat(body.response_format),
    cacheControl: marksCache({ turns, tools }),
    reasoningEffort,
    includeUsage: body.stream_options?.include_usage === true,
    sessionId,
    raw: body,
    dropped,
  };
}

/** A Chat Completions body for an upstream provider: the request, always streamed, usage asked for. */
function body(request: GatewayRequest, model: string): Record<string, unknown> {
  const messages: Record<string, unknown>[] = [];
  if (request.system !== undefined) messages.push({ role: 'system', content: request.system });
  for (const turn of request.turns) {
    if (turn.role === 'user') {
      const only = turn.parts.length === 1 ? turn.parts[0] : undefined;
      messages.push({
        role: 'user',
        content:
          only?.type === 'text'
            ? only.text
            : turn.parts.map((part) =>
                part.type === 'text' ? { type: 'text', text: part.text } : { type: 'image_url', image_url: { url: part.url } },
              ),
      });
    } else if (turn.role === 'assistant') {
      const message: Record<string, unknown> = { role: 'assistant', content: turn.text || null };
      if (turn.toolCalls.length)
        message.tool_calls = turn.toolCalls.map((call) => ({
          id: call.id,
          type: 'function',
          function: { name: call.name, arguments: call.arguments },
        }));
      messages.push(message);
    } else messages.push({ role: 'tool', tool_call_id: turn.callId, content: turn.output });
  }
  const out: Record<string, unknown> = { model, messages, stream: true, stream_options: { include_usage: true } };
  if (request.tools.length)
    out.tools = request.tools.map((tool) => ({
      type: 'function',
      function: { name: tool.name, ...(tool.description !== undefined && { description: tool.description }), parameters: tool.parameters },
    }));
  const choice = request.toolChoice;
  if (choice !== undefined)
    out.tool_choice = typeof choice === 'string' ? choice : { type: 'function', function: { name: choice.name } };
  if (request.maxTokens !== undefined) out.max_tokens = request.maxTokens;
  if (request.temperature !== undefined) out.temperature = request.temperature;
  if (request.topP !== undefined) out.top_p = request.topP;
  if (request.reasoningEffort !== undefined) out.reasoning_effort = request.reasoningEffort;
  if (carries(chatCodec, request, 'stop')) out.stop = request.stop;
  if (carries(chatCodec, request, 'seed')) out.seed = request.seed;
  // OpenAI refuses parallel_tool_calls without tools.
  if (request.tools.length && carries(chatCodec, request, 'parallelToolCalls')) out.parallel_tool_calls = request.parallelToolCalls;
  if (carries(chatCodec, request, 'user')) out.user = request.user;
  if (carries(chatCodec, request, 'serviceTier')) out.service_tier = request.serviceTier;
  if (request.responseFormat && carries(chatCodec, request, 'responseFormat'))
    out.response_format = chatResponseFormat(request.responseFormat);
  return out;
}

function writerOptions(options: WriteOptions) {
  return {
    model: options.model,
    toolCalls: options.toolCalls,
    ...(options.sessionId === undefined ? {} : { sessionId: options.sessionId }),
  };
}

/** Chat Completions, in and out. */
export const chatCodec: ProtocolCodec = {
  name: 'chat',
  path: CHAT_PROTOCOL.path,
  parse,
  fields: {
    stop: 'stop',
    seed: 'seed',
    topK: undefined,
    parallelToolCalls: 'parallel_tool_calls',
    user: 'user',
    serviceTier: 'service_tier',
    responseFormat: 'response_format',
    // Read on parts, as OpenAI-compatible gateways take it; OpenAI itself has no marker (it caches by itself).
    cacheControl: { name: 'messages[].content[].cache_control', carries: () => false },
  },
  errorBody: (_status, error) => ({ error }),
  streamError: (error) => ({ data: JSON.stringify({ error }) }),
  stream: (events, options) => {
    const thinking = new ThinkingBlocks();
    return toOpenAISse(thinking.tap(events), {
      ...writerOptions(options),
      includeUsage: options.includeUsage,
      finishDelta: () => thinking.field(),
    });
  },
  aggregate: async (events, options) => {
    const thinking = new ThinkingBlocks();
    const completion = await toOpenAICompletion(thinking.tap(events), writerOptions(options));
    const [choice] = completion.choices;
    return { ...completion, choices: [{ ...choice, message: { ...choice.message, ...thinking.field() } }] };
  },
  body,
  upstreamHeaders: {},
  // <think> text stays content: the gateway hands on what the upstream sent.
  read: (response, options) =>
    readWithListener(CHAT_PROTOCOL.createListener({ thinkTags: false }, options.quirks), CHAT_PROTOCOL, response, options),
};
