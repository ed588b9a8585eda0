/** Anthropic Messages as the gateway speaks it: requests read into the gateway's shape, answers, upstream calls. */
import type { FinishReason, Usage } from '@ai4ts/core';
import { isRecord } from '@ai4ts/core/internal';
import { MESSAGES_PROTOCOL } from '@ai4ts/messages';
import type { SseMessage } from '@ai4ts/sse';
import { z } from 'zod';
import { type BridgeEvent, openAIErrorObject } from '@ai4ts/bridge';
import { type Block, type BlockOp, blockAnswer, blockSteps, foldBlocks } from './blocks.js';
import { badRequest, parseBody } from './bad-request.js';
import {
  type CacheControl,
  cacheOf,
  carries,
  EFFORT_BUDGETS,
  newId,
  type GatewayErrorObject,
  type GatewayRequest,
  marksCache,
  numberOf,
  type Part,
  type ProtocolCodec,
  type ResponseFormat,
  readSeal,
  type Seal,
  sealFor,
  sealText,
  stringOf,
  type ToolChoice,
  type Turn,
  uncarriedKeys,
  unknownFields,
  type WriteOptions,
} from './neutral.js';
import { readWithListener } from './read.js';

/** The `anthropic-version` sent upstream. */
export const ANTHROPIC_VERSION = '2023-06-01';

const disableParallel = { disable_parallel_tool_use: z.boolean().nullish() };
const ToolChoiceSchema = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('auto'), ...disableParallel }),
  z.looseObject({ type: z.literal('any'), ...disableParallel }),
  z.looseObject({ type: z.literal('tool'), name: z.string().min(1), ...disableParallel }),
  z.looseObject({ type: z.literal('none') }),
]);

/** A Messages request as the gateway reads it. */
export const MessagesRequestSchema = z.looseObject({
  model: z.string().min(1),
  max_tokens: z.number().int().positive(),
  messages: z
    .array(
      z.looseObject({
        role: z.enum(['user', 'assistant']),
        content: z.union([z.string(), z.array(z.looseObject({ type: z.string() }))]),
      }),
    )
    .min(1, 'messages must not be empty'),
  system: z.union([z.string(), z.array(z.looseObject({ type: z.string() }))]).nullish(),
  stream: z.boolean().nullish(),
  tools: z.array(z.looseObject({ name: z.string().min(1), input_schema: z.record(z.string(), z.unknown()).nullish() })).nullish(),
  tool_choice: ToolChoiceSchema.nullish(),
  temperature: z.number().nullish(),
  top_p: z.number().nullish(),
  top_k: z.number().int().nonnegative().nullish(),
  stop_sequences: z.array(z.string()).nullish(),
  thinking: z.looseObject({ type: z.string(), budget_tokens: z.number().int().nullish() }).nullish(),
  output_config: z
    .looseObject({
      format: z.looseObject({ type: z.literal('json_schema'), schema: z.record(z.string(), z.unknown()) }).nullish(),
    })
    .nullish(),
  service_tier: z.string().nullish(),
  metadata: z.looseObject({ user_id: z.string().nullish() }).nullish(),
});

/** A validated Messages request. */
type MessagesRequest = z.infer<typeof MessagesRequestSchema>;

const KNOWN = new Set([
  'model',
  'max_tokens',
  'messages',
  'system',
  'stream',
  'tools',
  'tool_choice',
  'temperature',
  'top_p',
  'stop_sequences',
  'top_k',
  'thinking',
  'output_config',
  'service_tier',
  'metadata',
]);

function blocksOf(content: unknown): Record<string, unknown>[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return Array.isArray(content) ? content.filter(isRecord) : [];
}

function textOf(content: unknown): string {
  return blocksOf(content)
    .filter((block) => block.type === 'text' && typeof block.text === 'string')
    .map((block) => String(block.text))
    .join('\n');
}

function imageOf(block: Record<string, unknown>): Part | undefined {
  const source = block.source;
  if (!isRecord(source)) return undefined;
  const cache = cacheOf(block.cache_control);
  if (source.type === 'url' && typeof source.url === 'string') return { type: 'image', url: source.url, ...(cache && { cache }) };
  if (source.type === 'base64' && typeof source.data === 'string' && typeof source.media_type === 'string')
    return { type: 'image', url: `data:${source.media_type};base64,${source.data}`, ...(cache && { cache }) };
  return undefined;
}

/** The `cache_control` field of a marked block. */
function marker(cache: CacheControl | undefined): { cache_control?: CacheControl } {
  return cache ? { cache_control: cache } : {};
}

function readTurns(messages: readonly { role: string; content: unknown }[], dropped: string[]): Turn[] {
  const turns: Turn[] = [];
  for (const message of messages) {
    if (message.role === 'assistant') {
      const turn: Extract<Turn, { role: 'assistant' }> = { role: 'assistant', text: '', reasoning: [], toolCalls: [] };
      for (const block of blocksOf(message.content)) {
        if (block.type === 'text' && typeof block.text === 'string') turn.text += block.text;
        else if (block.type === 'thinking' && typeof block.thinking === 'string') {
          const seal = typeof block.signature === 'string' ? readSeal(block.signature, 'messages') : undefined;
          turn.reasoning.push({ text: block.thinking, ...(seal && { seal }) });
        } else if (block.type === 'redacted_thinking' && typeof block.data === 'string')
          turn.reasoning.push({ text: '', seal: { origin: 'messages', value: block.data, redacted: true } });
        else if (block.type === 'tool_use')
          turn.toolCalls.push({ id: String(block.id ?? ''), name: String(block.name ?? ''), arguments: JSON.stringify(block.input ?? {}) });
        else dropped.push(`messages[].content[].${String(block.type)}`);
      }
      turns.push(turn);
      continue;
    }
    const parts: Part[] = [];
    for (const block of blocksOf(message.content)) {
      const cache = cacheOf(block.cache_control);
      if (block.type === 'tool_result')
        turns.push({
          role: 'tool',
          callId: String(block.tool_use_id ?? ''),
          output: textOf(block.content),
          isError: block.is_error === true,
          ...(cache && { cache }),
        });
      else if (block.type === 'text' && typeof block.text === 'string')
        parts.push({ type: 'text', text: block.text, ...(cache && { cache }) });
      else {
        const image = block.type === 'image' ? imageOf(block) : undefined;
        if (image) parts.push(image);
        else dropped.push(`messages[].content[].${String(block.type)}`);
      }
    }
    if (parts.length) turns.push({ role: 'user', parts });
  }
  return turns;
}

function readToolChoice(choice: MessagesRequest['tool_choice']): ToolChoice | undefined {
  if (!choice) return undefined;
  if (choice.type === 'tool') return { name: choice.name };
  return choice.type === 'any' ? 'required' : choice.type;
}

function readFormat(config: MessagesRequest['output_config'], dropped: string[]): ResponseFormat | undefined {
  dropped.push(...uncarriedKeys('output_config', config, ['format']));
  const format = config?.format;
  // Messages' format has no name: Chat and Responses need one.
  return format ? { type: 'json_schema', name: 'output', schema: format.schema } : undefined;
}

function effortOf(thinking: unknown): GatewayRequest['reasoningEffort'] {
  if (!isRecord(thinking) || thinking.type !== 'enabled') return undefined;
  const budget = numberOf(thinking.budget_tokens) ?? 0;
  if (budget <= EFFORT_BUDGETS.minimal) return 'minimal';
  if (budget <= EFFORT_BUDGETS.low) return 'low';
  return budget <= EFFORT_BUDGETS.medium ? 'medium' : 'high';
}

function parse(json: unknown): GatewayRequest {
  const body = parseBody(MessagesRequestSchema, json);
  const dropped = unknownFields(body, KNOWN);
  const turns = readTurns(body.messages, dropped);
  if (!turns.some((turn) => turn.role === 'user')) throw badRequest('messages must contain a user message', 'messages');
  const tools = [];
  for (const tool of body.tools ?? []) {
    if (tool.type !== undefined && tool.type !== 'custom') dropped.push(`tools[].${String(tool.type)}`);
    else {
      const cache = cacheOf(tool.cache_control);
      tools.push({
        name: tool.name,
        ...(typeof tool.description === 'string' && { description: tool.description }),
        parameters: isRecord(tool.input_schema) ? tool.input_schema : { type: 'object', properties: {} },
        ...(cache && { cache }),
      });
    }
  }
  const system = body.system === undefined || body.system === null ? undefined : textOf(body.system);
  // The system prompt is one text: a marker on any of its blocks caches it whole.
  const systemCache = blocksOf(body.system).map((block) => cacheOf(block.cache_control)).findLast((cache) => cache !== undefined);
  const choice = body.tool_choice;
  const disable = choice && choice.type !== 'none' ? (choice.disable_parallel_tool_use ?? undefined) : undefined;
  dropped.push(...uncarriedKeys('metadata', body.metadata, ['user_id', 'session_id']));
  return {
    protocol: 'messages',
    model: body.model,
    stream: body.stream === true,
    system,
    ...(systemCache && { systemCache }),
    turns,
    tools,
    toolChoice: readToolChoice(body.tool_choice),
    maxTokens: body.max_tokens,
    temperature: body.temperature ?? undefined,
    topP: body.top_p ?? undefined,
    stop: body.stop_sequences ?? undefined,
    seed: undefined,
    topK: body.top_k ?? undefined,
    parallelToolCalls: disable === undefined ? undefined : !disable,
    user: body.metadata?.user_id ?? undefined,
    serviceTier: body.service_tier ?? undefined,
    responseFormat: readFormat(body.output_config, dropped),
    cacheControl: marksCache({ turns, tools, systemCache }),
    reasoningEffort: effortOf(body.thinking),
    includeUsage: true,
    sessionId: stringOf(body.metadata?.session_id) ?? stringOf(body.metadata?.user_id),
    raw: body,
    dropped,
  };
}

function imageBlock(url: string, cache: CacheControl | undefined): Record<string, unknown> {
  const data = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  if (data) return { type: 'image', source: { type: 'base64', media_type: data[1], data: data[2] }, ...marker(cache) };
  return { type: 'image', source: { type: 'url', url }, ...marker(cache) };
}

function inputOf(text: string): unknown {
  try {
    const value: unknown = JSON.parse(text);
    return isRecord(value) ? value : {};
  } catch {
    return {};
  }
}

/** A Messages body for an upstream provider. Tool results become user turns; consecutive user content joins. */
function body(request: GatewayRequest, model: string): Record<string, unknown> {
  const messages: { role: 'user' | 'assistant'; content: Record<string, unknown>[] }[] = [];
  const user = (blocks: Record<string, unknown>[]) => {
    const last = messages.at(-1);
    if (last?.role === 'user') last.content.push(...blocks);
    else messages.push({ role: 'user', content: blocks });
  };
  for (const turn of request.turns) {
    if (turn.role === 'user')
      user(
        turn.parts.map((part) =>
          part.type === 'text' ? { type: 'text', text: part.text, ...marker(part.cache) } : imageBlock(part.url, part.cache),
        ),
      );
    else if (turn.role === 'tool')
      user([
        {
          type: 'tool_result',
          tool_use_id: turn.callId,
          content: turn.output,
          ...(turn.isError && { is_error: true }),
          ...marker(turn.cache),
        },
      ]);
    else {
      const content: Record<string, unknown>[] = [];
      // Thinking goes back only with Anthropic's signature: the API refuses it without one, or with another's.
      for (const part of turn.reasoning) {
        const seal = sealFor(part, 'messages');
        if (seal?.redacted) content.push({ type: 'redacted_thinking', data: seal.value });
        else if (seal) content.push({ type: 'thinking', thinking: part.text, signature: seal.value });
      }
      if (turn.text) content.push({ type: 'text', text: turn.text });
      for (const call of turn.toolCalls) content.push({ type: 'tool_use', id: call.id, name: call.name, input: inputOf(call.arguments) });
      messages.push({ role: 'assistant', content });
    }
  }
  // With thinking on, Anthropic wants the last assistant turn of a tool loop to begin with its own thinking: a turn
  // that another vendor (or a client without it) made has none, and the request goes without thinking instead.
  const last = request.turns.findLast((turn) => turn.role === 'assistant');
  const unsigned = last !== undefined && last.toolCalls.length > 0 && !last.reasoning.some((part) => sealFor(part, 'messages'));
  const budget = request.reasoningEffort === undefined || unsigned ? undefined : EFFORT_BUDGETS[request.reasoningEffort];
  // max_tokens must exceed the thinking budget.
  const maxTokens = Math.max(request.maxTokens ?? 4096, budget === undefined ? 0 : budget + 1024);
  const out: Record<string, unknown> = { model, max_tokens: maxTokens, messages, stream: true };
  if (request.system !== undefined)
    out.system = request.systemCache ? [{ type: 'text', text: request.system, cache_control: request.systemCache }] : request.system;
  if (request.tools.length)
    out.tools = request.tools.map((tool) => ({
      name: tool.name,
      ...(tool.description !== undefined && { description: tool.description }),
      input_schema: tool.parameters,
      ...marker(tool.cache),
    }));
  const choice = request.toolChoice;
  const toolChoice: Record<string, unknown> | undefined =
    choice === undefined
      ? undefined
      : typeof choice !== 'string'
        ? { type: 'tool', name: choice.name }
        : { type: choice === 'required' ? 'any' : choice };
  // Parallel calls are switched off on the tool choice: `auto` when the request named none.
  if (request.parallelToolCalls === false && request.tools.length && choice !== 'none')
    out.tool_choice = { ...(toolChoice ?? { type: 'auto' }), disable_parallel_tool_use: true };
  else if (toolChoice) out.tool_choice = toolChoice;
  if (budget !== undefined) out.thinking = { type: 'enabled', budget_tokens: budget };
  if (request.temperature !== undefined) out.temperature = request.temperature;
  if (request.topP !== undefined) out.top_p = request.topP;
  if (carries(messagesCodec, request, 'stop')) out.stop_sequences = request.stop;
  if (carries(messagesCodec, request, 'topK')) out.top_k = request.topK;
  if (carries(messagesCodec, request, 'user')) out.metadata = { user_id: request.user };
  if (carries(messagesCodec, request, 'serviceTier')) out.service_tier = request.serviceTier;
  if (request.responseFormat?.type === 'json_schema' && carries(messagesCodec, request, 'responseFormat'))
    out.output_config = { format: { type: 'json_schema', schema: request.responseFormat.schema } };
  return out;
}

/** Anthropic's error type for an HTTP status. */
function errorType(status: number): string {
  const types: Record<number, string> = {
    400: 'invalid_request_error',
    401: 'authentication_error',
    403: 'permission_error',
    404: 'not_found_error',
    405: 'invalid_request_error',
    413: 'request_too_large',
    429: 'rate_limit_error',
    503: 'overloaded_error',
    529: 'overloaded_error',
  };
  return types[status] ?? 'api_error';
}

function errorBody(status: number, error: GatewayErrorObject) {
  return { type: 'error', error: { type: errorType(status), message: error.message, ...(error.code && { code: error.code }) } };
}

/** Chat's finish reasons in Messages' vocabulary. */
export function stopReason(reason: FinishReason): string {
  const reasons: Record<string, string> = { stop: 'end_turn', tool_calls: 'tool_use', length: 'max_tokens', content_filter: 'refusal' };
  return reasons[reason] ?? reason;
}

/**
 * Messages' usage: its `input_tokens` leaves out what was read from or written to the cache, which the other protocols
 * count in their prompt tokens (their `cached_tokens`; Messages' own writes as `cache_creation_tokens`).
 */
function usageOf(usage: Usage | undefined) {
  const details = usage?.prompt_tokens_details;
  const read = numberOf(details?.cached_tokens);
  const written = numberOf(details?.cache_creation_tokens);
  return {
    input_tokens: (usage?.prompt_tokens ?? 0) - (read ?? 0) - (written ?? 0),
    output_tokens: usage?.completion_tokens ?? 0,
    ...(read !== undefined && { cache_read_input_tokens: read }),
    ...(written !== undefined && { cache_creation_input_tokens: written }),
  };
}

/** A reasoning block for a Messages client: Anthropic's redacted thinking as it came, any other seal in the signature. */
function thinkingBlock(text: string, seal: Seal | undefined): Record<string, unknown> {
  if (seal?.redacted && seal.origin === 'messages') return { type: 'redacted_thinking', data: seal.value };
  return { type: 'thinking', thinking: text, signature: seal ? sealText(seal, 'messages') : '' };
}

function contentBlock(block: Block): Record<string, unknown> {
  if (block.kind === 'text') return { type: 'text', text: block.text };
  if (block.kind === 'reasoning') return thinkingBlock(block.text, block.seal);
  return { type: 'tool_use', id: block.id, name: block.name, input: inputOf(block.text) };
}

function event(type: string, fields: Record<string, unknown> = {}): SseMessage {
  return { event: type, data: JSON.stringify({ type, ...fields }) };
}

function opEvents(op: BlockOp): SseMessage[] {
  const { block } = op;
  const index = block.index;
  switch (op.op) {
    case 'open': {
      const empty =
        block.kind === 'text'
          ? { type: 'text', text: '' }
          : block.kind === 'reasoning'
            ? // A redacted block opens whole; a thinking block's signature comes last, as a delta.
              block.seal?.redacted
              ? thinkingBlock('', block.seal)
              : { type: 'thinking', thinking: '', signature: '' }
            : { type: 'tool_use', id: block.id, name: block.name, input: {} };
      return [event('content_block_start', { index, content_block: empty })];
    }
    case 'delta': {
      const delta =
        block.kind === 'text'
          ? { type: 'text_delta', text: op.delta }
          : block.kind === 'reasoning'
            ? { type: 'thinking_delta', thinking: op.delta }
            : { type: 'input_json_delta', partial_json: op.delta };
      return [event('content_block_delta', { index, delta })];
    }
    case 'seal':
      return [event('content_block_delta', { index, delta: { type: 'signature_delta', signature: sealText(op.seal, 'messages') } })];
    case 'close':
      return [event('content_block_stop', { index })];
  }
}

function shell(id: string, model: string) {
  return { id, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null };
}

/** Messages' in-stream `error` event. */
function errorEvent(message: string): SseMessage {
  return event('error', { error: { type: 'api_error', message } });
}

/** Bridge events to Messages SSE: `message_start`, blocks one after another, `message_delta`, `message_stop`. */
async function* toMessagesSse(events: AsyncIterable<BridgeEvent>, options: WriteOptions): AsyncGenerator<SseMessage> {
  const answer = blockAnswer(options);
  const start = event('message_start', { message: { ...shell(newId('msg'), options.model), usage: usageOf(undefined) } });
  let began = false;
  try {
    for await (const ops of blockSteps(events, options, answer)) {
      if (!began) yield start;
      began = true;
      for (const op of ops) yield* opEvents(op);
    }
  } catch (error) {
    if (!began) throw error;
    yield errorEvent(openAIErrorObject(error).message);
    return;
  }
  if (!began) yield start;
  for (const op of answer.blocks.finish()) yield* opEvents(op);
  yield event('message_delta', {
    delta: { stop_reason: stopReason(answer.state.finalReason), stop_sequence: null },
    usage: usageOf(answer.state.usage),
  });
  yield event('message_stop');
}

/** Bridge events to one Messages `message`. */
async function toMessage(events: AsyncIterable<BridgeEvent>, options: WriteOptions) {
  const { state, blocks } = await foldBlocks(events, options);
  return {
    ...shell(newId('msg'), options.model),
    content: blocks.blocks.map(contentBlock),
    stop_reason: stopReason(state.finalReason),
    usage: usageOf(state.usage),
  };
}

/** Anthropic Messages, in and out. */
export const messagesCodec: ProtocolCodec = {
  name: 'messages',
  path: MESSAGES_PROTOCOL.path,
  parse,
  fields: {
    stop: 'stop_sequences',
    seed: undefined,
    topK: 'top_k',
    parallelToolCalls: 'tool_choice.disable_parallel_tool_use',
    user: 'metadata.user_id',
    serviceTier: 'service_tier',
    // A JSON mode without a schema has no equivalent.
    responseFormat: { name: 'output_config.format', carries: (request) => request.responseFormat?.type === 'json_schema' },
    cacheControl: 'cache_control',
  },
  errorBody,
  streamError: (error) => errorEvent(error.message),
  stream: toMessagesSse,
  aggregate: toMessage,
  body,
  upstreamHeaders: { 'anthropic-version': ANTHROPIC_VERSION },
  read: (response, options) =>
    readWithListener(MESSAGES_PROTOCOL.createListener(undefined, options.quirks), MESSAGES_PROTOCOL, response, {
      ...options,
      // The thinking signature and redacted thinking are not normalized events: read them off the wire.
      peek: (sse) => {
        const delta = sse.event === 'content_block_delta' && sse.data.includes('signature_delta');
        const redacted = sse.event === 'content_block_start' && sse.data.includes('redacted_thinking');
        if (!delta && !redacted) return undefined;
        let data: unknown;
        try {
          data = JSON.parse(sse.data);
        } catch {
          return undefined;
        }
        const field = isRecord(data) ? (delta ? data.delta : data.content_block) : undefined;
        if (!isRecord(field)) return undefined;
        if (field.type === 'signature_delta' && typeof field.signature === 'string')
          return { type: 'reasoning.signature', signature: field.signature, origin: 'messages' };
        if (field.type === 'redacted_thinking' && typeof field.data === 'string')
          return { type: 'reasoning.signature', signature: field.data, origin: 'messages', redacted: true };
        return undefined;
      },
    }),
};
