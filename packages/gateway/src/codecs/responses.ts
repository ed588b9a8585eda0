/** OpenAI Responses as the gateway speaks it: requests read into the gateway's shape, answers, upstream calls. */
import type { Usage } from '@ai4ts/core';
import { isRecord } from '@ai4ts/core/internal';
import { RESPONSES_PROTOCOL } from '@ai4ts/responses';
import type { SseMessage } from '@ai4ts/sse';
import { z } from 'zod';
import { type BridgeEvent, type CompletionBuilder, openAIErrorObject } from '@ai4ts/bridge';
import { type Block, type BlockOp, blockAnswer, blockSteps, foldBlocks } from './blocks.js';
import { badRequest, parseBody } from './bad-request.js';
import {
  assistantTurn,
  carries,
  type GatewayErrorObject,
  type GatewayRequest,
  newId,
  type Part,
  type ProtocolCodec,
  type ResponseFormat,
  readSeal,
  sealFor,
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

const FunctionTool = z.looseObject({
  type: z.literal('function'),
  name: z.string().min(1),
  description: z.string().nullish(),
  parameters: z.record(z.string(), z.unknown()).nullish(),
  strict: z.boolean().nullish(),
});
/** A hosted tool (`web_search`, ...): named as dropped. */
const OtherTool = z.looseObject({ type: z.string().refine((type) => type !== 'function', { message: 'a function tool needs a name', abort: true }) });

const ToolChoiceSchema = z.union([
  z.enum(['auto', 'none', 'required']),
  z.looseObject({ type: z.literal('function'), name: z.string().min(1) }),
  z.looseObject({ type: z.string().refine((type) => type !== 'function', { message: 'a function tool_choice needs a name', abort: true }) }),
]);

const FormatSchema = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('text') }),
  z.looseObject({ type: z.literal('json_object') }),
  z.looseObject({
    type: z.literal('json_schema'),
    name: z.string().min(1),
    description: z.string().nullish(),
    schema: z.record(z.string(), z.unknown()),
    strict: z.boolean().nullish(),
  }),
]);

/** A Responses request as the gateway reads it. */
export const ResponsesRequestSchema = z.looseObject({
  model: z.string().min(1),
  input: z.union([z.string(), z.array(z.looseObject({}))]),
  instructions: z.string().nullish(),
  stream: z.boolean().nullish(),
  tools: z.array(z.union([FunctionTool, OtherTool])).nullish(),
  tool_choice: ToolChoiceSchema.nullish(),
  parallel_tool_calls: z.boolean().nullish(),
  max_output_tokens: z.number().int().positive().nullish(),
  temperature: z.number().nullish(),
  top_p: z.number().nullish(),
  reasoning: z.looseObject({ effort: z.string().nullish() }).nullish(),
  text: z.looseObject({ format: FormatSchema.nullish() }).nullish(),
  user: z.string().nullish(),
  service_tier: z.string().nullish(),
  metadata: z.record(z.string(), z.unknown()).nullish(),
  previous_response_id: z.null().optional(),
});

/** A validated Responses request. */
type ResponsesRequest = z.infer<typeof ResponsesRequestSchema>;

/** Fields read, or that change nothing the gateway can honour differently. */
const KNOWN = new Set([
  'model',
  'input',
  'instructions',
  'stream',
  'tools',
  'tool_choice',
  'max_output_tokens',
  'temperature',
  'top_p',
  'reasoning',
  'text',
  'user',
  'metadata',
  'service_tier',
  'store',
  'parallel_tool_calls',
  'include',
  'previous_response_id',
]);

function partsOf(content: unknown, dropped: string[]): { parts: Part[]; text: string } {
  if (typeof content === 'string') return { parts: [{ type: 'text', text: content }], text: content };
  const parts: Part[] = [];
  const texts: string[] = [];
  for (const part of Array.isArray(content) ? content : []) {
    if (!isRecord(part)) continue;
    if ((part.type === 'input_text' || part.type === 'output_text') && typeof part.text === 'string') {
      parts.push({ type: 'text', text: part.text });
      texts.push(part.text);
    } else if (part.type === 'input_image' && typeof part.image_url === 'string')
      parts.push({ type: 'image', url: part.image_url });
    else dropped.push(`input[].content[].${String(part.type)}`);
  }
  return { parts, text: texts.join('\n') };
}

function readInput(input: string | Record<string, unknown>[], dropped: string[]) {
  if (typeof input === 'string') return { system: [], turns: [{ role: 'user', parts: [{ type: 'text', text: input }] }] as Turn[] };
  const system: string[] = [];
  const turns: Turn[] = [];
  for (const item of input) {
    const type = item.type ?? 'message';
    if (type === 'message') {
      const { parts, text } = partsOf(item.content, dropped);
      if (item.role === 'system' || item.role === 'developer') system.push(text);
      else if (item.role === 'assistant') assistantTurn(turns).text += text;
      else if (item.role === 'user') turns.push({ role: 'user', parts });
      else dropped.push(`input[].role=${String(item.role)}`);
    } else if (type === 'function_call')
      assistantTurn(turns).toolCalls.push({
        id: String(item.call_id ?? ''),
        name: String(item.name ?? ''),
        arguments: typeof item.arguments === 'string' ? item.arguments : '{}',
      });
    else if (type === 'function_call_output')
      turns.push({
        role: 'tool',
        callId: String(item.call_id ?? ''),
        output: typeof item.output === 'string' ? item.output : partsOf(item.output, dropped).text,
        isError: false,
      });
    else if (type === 'reasoning') {
      const summary = Array.isArray(item.summary) ? item.summary.filter(isRecord) : [];
      const text = summary.map((part) => (typeof part.text === 'string' ? part.text : '')).join('');
      const seal = typeof item.encrypted_content === 'string' ? readSeal(item.encrypted_content, 'responses') : undefined;
      if (text || seal) assistantTurn(turns).reasoning.push({ text, ...(seal && { seal }) });
    } else dropped.push(`input[].${String(type)}`);
  }
  return { system, turns };
}

function readTools(tools: ResponsesRequest['tools'], dropped: string[]): ToolSpec[] {
  const out: ToolSpec[] = [];
  for (const tool of tools ?? []) {
    if (tool.type === 'function' && typeof tool.name === 'string')
      out.push({
        name: tool.name,
        ...(typeof tool.description === 'string' && { description: tool.description }),
        parameters: isRecord(tool.parameters) ? tool.parameters : { type: 'object', properties: {} },
      });
    else dropped.push(`tools[].${tool.type}`);
  }
  return out;
}

function readToolChoice(choice: ResponsesRequest['tool_choice'], dropped: string[]): ToolChoice | undefined {
  if (choice === null || choice === undefined || typeof choice === 'string') return choice ?? undefined;
  if (choice.type === 'function' && typeof choice.name === 'string') return { name: choice.name };
  dropped.push(`tool_choice.${choice.type}`);
  return undefined;
}

function readFormat(text: ResponsesRequest['text'], dropped: string[]): ResponseFormat | undefined {
  dropped.push(...uncarriedKeys('text', text, ['format']));
  const format = text?.format;
  if (!format || format.type === 'text') return undefined;
  if (format.type === 'json_object') return { type: 'json_object' };
  const { name, description, schema, strict } = format;
  return {
    type: 'json_schema',
    name,
    schema,
    ...(typeof strict === 'boolean' && { strict }),
    ...(typeof description === 'string' && { description }),
  };
}

/** Responses' `text.format` for a structured answer. */
function textFormat(format: ResponseFormat): Record<string, unknown> {
  if (format.type === 'json_object') return { type: 'json_object' };
  const { name, schema, strict, description } = format;
  return { type: 'json_schema', name, schema, ...(strict !== undefined && { strict }), ...(description !== undefined && { description }) };
}

function parse(json: unknown): GatewayRequest {
  if (isRecord(json) && typeof json.previous_response_id === 'string')
    throw badRequest(
      'previous_response_id is not supported by the gateway: send the whole conversation in input',
      'previous_response_id',
    );
  const body = parseBody(ResponsesRequestSchema, json);
  const dropped = unknownFields(body, KNOWN);
  // `metadata` is not sent upstream: only its session id is read (for daemons).
  dropped.push(...uncarriedKeys('metadata', body.metadata, ['session_id']));
  const { system, turns } = readInput(body.input, dropped);
  if (body.instructions) system.unshift(body.instructions);
  if (!turns.some((turn) => turn.role === 'user')) throw badRequest('input must contain a user message', 'input');
  const effort = body.reasoning?.effort;
  const reasoningEffort =
    effort === 'minimal' || effort === 'low' || effort === 'medium' || effort === 'high' ? effort : undefined;
  if (effort && !reasoningEffort) dropped.push(`reasoning.effort=${effort}`);
  return {
    protocol: 'responses',
    model: body.model,
    stream: body.stream === true,
    system: system.length ? system.join('\n\n') : undefined,
    turns,
    tools: readTools(body.tools, dropped),
    toolChoice: readToolChoice(body.tool_choice, dropped),
    maxTokens: body.max_output_tokens ?? undefined,
    temperature: body.temperature ?? undefined,
    topP: body.top_p ?? undefined,
    stop: undefined,
    seed: undefined,
    topK: undefined,
    parallelToolCalls: body.parallel_tool_calls ?? undefined,
    user: body.user ?? undefined,
    serviceTier: body.service_tier ?? undefined,
    responseFormat: readFormat(body.text, dropped),
    cacheControl: undefined,
    reasoningEffort,
    includeUsage: true,
    sessionId: stringOf(body.metadata?.session_id) ?? stringOf(body.user),
    raw: body,
    dropped,
  };
}

/** A Responses body for an upstream provider: stateless (`store: false`), the whole conversation in `input`. */
function body(request: GatewayRequest, model: string): Record<string, unknown> {
  const input: Record<string, unknown>[] = [];
  for (const turn of request.turns) {
    if (turn.role === 'user')
      input.push({
        type: 'message',
        role: 'user',
        content: turn.parts.map((part) =>
          part.type === 'text' ? { type: 'input_text', text: part.text } : { type: 'input_image', image_url: part.url },
        ),
      });
    else if (turn.role === 'tool') input.push({ type: 'function_call_output', call_id: turn.callId, output: turn.output });
    else {
      // Reasoning goes back only as OpenAI's own encrypted items: the API takes no other (without `store`, no ids).
      for (const part of turn.reasoning) {
        const seal = sealFor(part, 'responses');
        if (seal)
          input.push({
            type: 'reasoning',
            summary: part.text ? [{ type: 'summary_text', text: part.text }] : [],
            encrypted_content: seal.value,
          });
      }
      if (turn.text)
        input.push({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: turn.text, annotations: [] }] });
      for (const call of turn.toolCalls)
        input.push({ type: 'function_call', call_id: call.id, name: call.name, arguments: call.arguments });
    }
  }
  const out: Record<string, unknown> = { model, input, stream: true, store: false };
  if (request.system !== undefined) out.instructions = request.system;
  if (request.tools.length)
    out.tools = request.tools.map((tool) => ({
      type: 'function',
      name: tool.name,
      ...(tool.description !== undefined && { description: tool.description }),
      parameters: tool.parameters,
      strict: false,
    }));
  const choice = request.toolChoice;
  if (choice !== undefined) out.tool_choice = typeof choice === 'string' ? choice : { type: 'function', name: choice.name };
  if (request.maxTokens !== undefined) out.max_output_tokens = request.maxTokens;
  if (request.temperature !== undefined) out.temperature = request.temperature;
  if (request.topP !== undefined) out.top_p = request.topP;
  if (request.reasoningEffort !== undefined) out.reasoning = { effort: request.reasoningEffort, summary: 'auto' };
  // Without `store`, the reasoning comes encrypted to go back with the next turn (a reasoning model's only: others
  // refuse the include).
  if (request.reasoningEffort !== undefined || input.some((item) => item.type === 'reasoning'))
    out.include = ['reasoning.encrypted_content'];
  if (request.tools.length && carries(responsesCodec, request, 'parallelToolCalls'))
    out.parallel_tool_calls = request.parallelToolCalls;
  if (carries(responsesCodec, request, 'user')) out.user = request.user;
  if (carries(responsesCodec, request, 'serviceTier')) out.service_tier = request.serviceTier;
  if (request.responseFormat && carries(responsesCodec, request, 'responseFormat'))
    out.text = { format: textFormat(request.responseFormat) };
  return out;
}

function usageOf(usage: Usage | undefined) {
  if (!usage) return null;
  return {
    input_tokens: usage.prompt_tokens,
    input_tokens_details: { cached_tokens: usage.prompt_tokens_details?.cached_tokens ?? 0 },
    output_tokens: usage.completion_tokens,
    output_tokens_details: { reasoning_tokens: usage.completion_tokens_details?.reasoning_tokens ?? 0 },
    total_tokens: usage.total_tokens,
  };
}

/** Ids of output items, made once per block. */
class ItemIds {
  readonly #ids = new Map<Block, string>();

  of(block: Block): string {
    let id = this.#ids.get(block);
    if (id === undefined) {
      const prefix = block.kind === 'text' ? 'msg' : block.kind === 'reasoning' ? 'rs' : 'fc';
      id = newId(prefix);
      this.#ids.set(block, id);
    }
    return id;
  }
}

function outputText(text: string) {
  return { type: 'output_text', text, annotations: [], logprobs: [] };
}

/** A block as a finished (or, while streaming, an opening) output item. */
function outputItem(block: Block, id: string, done: boolean, status = done ? 'completed' : 'in_progress'): Record<string, unknown> {
  if (block.kind === 'reasoning')
    return {
      id,
      type: 'reasoning',
      summary: done && block.text ? [{ type: 'summary_text', text: block.text }] : [],
      ...(done && block.seal && { encrypted_content: sealText(block.seal, 'responses') }),
    };
  if (block.kind === 'text')
    return { id, type: 'message', status, role: 'assistant', content: done ? [outputText(block.text)] : [] };
  return { id, type: 'function_call', status, call_id: block.id, name: block.name, arguments: done ? block.text : '' };
}

function opEvents(op: BlockOp, ids: ItemIds): Record<string, unknown>[] {
  const { block } = op;
  const item_id = ids.of(block);
  const at = { item_id, output_index: block.index };
  const part = block.kind === 'reasoning' ? { ...at, summary_index: 0 } : { ...at, content_index: 0 };
  switch (op.op) {
    case 'open': {
      const added = { type: 'response.output_item.added', output_index: block.index, item: outputItem(block, item_id, false) };
      if (block.kind === 'reasoning')
        return [added, { type: 'response.reasoning_summary_part.added', ...part, part: { type: 'summary_text', text: '' } }];
      if (block.kind === 'text') return [added, { type: 'response.content_part.added', ...part, part: outputText('') }];
      return [added];
    }
    case 'delta':
      if (block.kind === 'reasoning') return [{ type: 'response.reasoning_summary_text.delta', ...part, delta: op.delta }];
      if (block.kind === 'text') return [{ type: 'response.output_text.delta', ...part, delta: op.delta, logprobs: [] }];
      return [{ type: 'response.function_call_arguments.delta', ...at, delta: op.delta }];
    case 'seal':
      // The finished item carries it.
      return [];
    case 'close': {
      const done = { type: 'response.output_item.done', output_index: block.index, item: outputItem(block, item_id, true) };
      if (block.kind === 'reasoning')
        return [
          { type: 'response.reasoning_summary_text.done', ...part, text: block.text },
          { type: 'response.reasoning_summary_part.done', ...part, part: { type: 'summary_text', text: block.text } },
          done,
        ];
      if (block.kind === 'text')
        return [
          { type: 'response.output_text.done', ...part, text: block.text, logprobs: [] },
          { type: 'response.content_part.done', ...part, part: outputText(block.text) },
          done,
        ];
      return [{ type: 'response.function_call_arguments.done', ...at, name: block.name, arguments: block.text }, done];
    }
  }
}

/** The response object's fields other than output and usage. */
function shell(id: string, model: string, status: string, created: number) {
  return {
    id,
    object: 'response',
    created_at: created,
    status,
    error: null,
    incomplete_details: null as { reason: string } | null,
    instructions: null,
    model,
    parallel_tool_calls: true,
    tool_choice: 'auto',
    tools: [],
    store: false,
    metadata: {},
  };
}

/** How an answer that ended well ends: `completed`, or `incomplete` with its reason for a truncation. */
function outcome(state: CompletionBuilder): { status: string; incomplete: { reason: string } | null } {
  const reason = state.finalReason;
  if (reason === 'length') return { status: 'incomplete', incomplete: { reason: 'max_output_tokens' } };
  if (reason === 'content_filter') return { status: 'incomplete', incomplete: { reason: 'content_filter' } };
  return { status: 'completed', incomplete: null };
}

/** Responses' in-stream `error` event (without its `sequence_number`). */
function errorEvent({ code, message, type }: GatewayErrorObject): Record<string, unknown> {
  // OpenAI's flat fields (read by openai-node and @ai-sdk/openai 3.x) and the nested `error` object (read by
  // @ai-sdk/openai 2.x, and which openai-node raises as an APIError): every client sees the failure.
  const fields = { code: code ?? 'server_error', message, param: null };
  return { type: 'error', ...fields, error: { type, ...fields } };
}

/** Bridge events to Responses SSE, each event with its `sequence_number`. */
async function* toResponsesSse(events: AsyncIterable<BridgeEvent>, options: WriteOptions): AsyncGenerator<SseMessage> {
  const answer = blockAnswer(options);
  const ids = new ItemIds();
  const id = newId('resp');
  const created = Math.floor(Date.now() / 1000);
  let sequence = 0;
  const message = (payload: Record<string, unknown>): SseMessage => ({
    event: String(payload.type),
    data: JSON.stringify({ ...payload, sequence_number: sequence++ }),
  });
  const opening = { ...shell(id, options.model, 'in_progress', created), output: [], usage: null };
  const start = () => [
    message({ type: 'response.created', response: opening }),
    message({ type: 'response.in_progress', response: opening }),
  ];
  let began = false;
  try {
    for await (const ops of blockSteps(events, options, answer)) {
      if (!began) yield* start();
      began = true;
      for (const op of ops) for (const payload of opEvents(op, ids)) yield message(payload);
    }
  } catch (error) {
    if (!began) throw error;
    const failure = openAIErrorObject(error);
    yield message(errorEvent(failure));
    const failed = { ...shell(id, options.model, 'failed', created), error: { code: failure.code ?? 'server_error', message: failure.message } };
    // What streamed before the failure stays in the response, each item as far as it got.
    const output = answer.blocks.blocks.map((block) => outputItem(block, ids.of(block), true, block.done ? 'completed' : 'incomplete'));
    yield message({ type: 'response.failed', response: { ...failed, output, usage: usageOf(answer.state.usage) } });
    return;
  }
  if (!began) yield* start();
  for (const op of answer.blocks.finish()) for (const payload of opEvents(op, ids)) yield message(payload);
  const { status, incomplete } = outcome(answer.state);
  const response = {
    ...shell(id, options.model, status, created),
    incomplete_details: incomplete,
    output: answer.blocks.blocks.map((block) => outputItem(block, ids.of(block), true)),
    usage: usageOf(answer.state.usage),
  };
  yield message({ type: status === 'completed' ? 'response.completed' : 'response.incomplete', response });
}

/** Bridge events to one `response` object. */
async function toResponse(events: AsyncIterable<BridgeEvent>, options: WriteOptions) {
  const { state, blocks } = await foldBlocks(events, options);
  const ids = new ItemIds();
  const { status, incomplete } = outcome(state);
  return {
    ...shell(newId('resp'), options.model, status, Math.floor(Date.now() / 1000)),
    incomplete_details: incomplete,
    output: blocks.blocks.map((block) => outputItem(block, ids.of(block), true)),
    output_text: blocks.blocks.filter((block) => block.kind === 'text').map((block) => block.text).join(''),
    usage: usageOf(state.usage),
  };
}

/** OpenAI Responses, in and out. */
export const responsesCodec: ProtocolCodec = {
  name: 'responses',
  path: RESPONSES_PROTOCOL.path,
  parse,
  fields: {
    stop: undefined,
    seed: undefined,
    topK: undefined,
    parallelToolCalls: 'parallel_tool_calls',
    user: 'user',
    serviceTier: 'service_tier',
    responseFormat: 'text.format',
    // OpenAI caches prompt prefixes by itself.
    cacheControl: undefined,
  },
  errorBody: (_status, error) => ({ error }),
  streamError: (error) => ({ event: 'error', data: JSON.stringify(errorEvent(error)) }),
  stream: toResponsesSse,
  aggregate: toResponse,
  body,
  upstreamHeaders: {},
  read: (response, options) =>
    readWithListener(RESPONSES_PROTOCOL.createListener(undefined, options.quirks), RESPONSES_PROTOCOL, response, {
      ...options,
      // The encrypted reasoning is not a normalized event: read it off the finished item.
      peek: (sse) => {
        if (!sse.data.includes('encrypted_content')) return undefined;
        let data: unknown;
        try {
          data = JSON.parse(sse.data);
        } catch {
          return undefined;
        }
        const item = isRecord(data) && data.type === 'response.output_item.done' && isRecord(data.item) ? data.item : undefined;
        return item?.type === 'reasoning' && typeof item.encrypted_content === 'string' && item.encrypted_content !== ''
          ? { type: 'reasoning.signature', signature: item.encrypted_content, origin: 'responses' }
          : undefined;
      },
    }),
};
