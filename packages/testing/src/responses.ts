/**
 * OpenAI Responses as the scripted model answers it: one scripted turn becomes either a `response` object or the
 * event sequence the real API streams (`response.created` … `response.completed`, each with its `sequence_number`),
 * with the deltas fragmented the way providers fragment.
 */
import type { SseMessage } from '@ai4ts/sse';
import { splitText } from './fragment.js';
import {
  isRecord,
  type MockTurn,
  type MockUsage,
  type RenderContext,
  type ResolvedTurn,
  randomId,
  usageDetail,
} from './turn.js';

/** An item of a Responses request's `input`, as far as scripts need to read it. */
export interface ResponsesInputItem {
  /** `message` (or absent, for a plain `{role, content}`), `function_call`, `function_call_output`, `reasoning`… */
  type?: string;
  role?: string;
  content?: unknown;
  call_id?: string;
  name?: string;
  arguments?: string;
  output?: unknown;
  [key: string]: unknown;
}

/** The body of a `POST /v1/responses` request. */
export interface ResponsesRequestBody {
  model?: string;
  input: string | ResponsesInputItem[];
  instructions?: string | null;
  stream?: boolean;
  tools?: unknown[];
  /** With `reasoning.encrypted_content`, reasoning items carry an (opaque, seeded) `encrypted_content`. */
  include?: string[];
  [key: string]: unknown;
}

/** What a Responses answer can be: a JSON object whose `input` is a string or an array. */
export function isResponsesBody(body: unknown): body is ResponsesRequestBody {
  return isRecord(body) && (typeof body.input === 'string' || Array.isArray(body.input));
}

/** The request's input as items: a string input is one user message. */
export function inputItems(input: ResponsesRequestBody['input']): ResponsesInputItem[] {
  return typeof input === 'string' ? [{ type: 'message', role: 'user', content: input }] : input;
}

/**
 * The responses the server stored (every one answered without `store: false`), by id: the conversation each
 * ends, so a request continuing one by `previous_response_id` reads as the whole conversation, as the API reads it.
 */
export class StoredResponses {
  readonly #conversations = new Map<string, ResponsesInputItem[]>();

  /** The body a script sees: `input` preceded by the stored conversation; undefined for an unknown id. */
  resolve(body: ResponsesRequestBody): ResponsesRequestBody | undefined {
    const previous = body.previous_response_id;
    if (typeof previous !== 'string') return body;
    const conversation = this.#conversations.get(previous);
    return conversation && { ...body, input: [...conversation, ...inputItems(body.input)] };
  }

  /** Remembers an answered response (unless the request said `store: false`). */
  store(body: ResponsesRequestBody, answer: unknown): void {
    if (body.store === false || !isRecord(answer) || typeof answer.id !== 'string') return;
    const output = Array.isArray(answer.output) ? answer.output.filter(isRecord) : [];
    this.#conversations.set(answer.id, [...inputItems(body.input), ...output]);
  }
}

/** The text the usage estimate counts: instructions and input. */
export function responsesPrompt(body: ResponsesRequestBody): string {
  return JSON.stringify([body.instructions ?? '', body.input]);
}

/** The Responses usage object, read from the Chat-shaped {@link MockUsage}. */
export function responsesUsage(usage: MockUsage) {
  return {
    input_tokens: usage.prompt_tokens,
    input_tokens_details: { cached_tokens: usageDetail(usage, 'prompt_tokens_details', 'cached_tokens') },
    output_tokens: usage.completion_tokens,
    output_tokens_details: { reasoning_tokens: usageDetail(usage, 'completion_tokens_details', 'reasoning_tokens') },
    total_tokens: usage.total_tokens,
  };
}

type OutputItem = Record<string, unknown> & { id: string; type: 'reasoning' | 'message' | 'function_call' };

/** The non-streamed answer: a `response` object, `completed` or (truncated) `incomplete`. */
export function responseObject(turn: ResolvedTurn, body: ResponsesRequestBody, context: RenderContext) {
  const items = outputItems(turn, body, context.random);
  const { status, incompleteDetails } = outcome(turn);
  return {
    ...responseShell(body, context, status),
    incomplete_details: incompleteDetails,
    output: items,
    usage: responsesUsage(turn.usage),
  };
}

/**
 * The streamed answer: `response.created`, `response.in_progress`, then each output item (reasoning summary,
 * message, function calls, one after another as the API sends them) from `response.output_item.added` through its
 * deltas of 1-6 (text) or 1-8 (arguments, cut anywhere) characters to `response.output_item.done`, then
 * `response.completed` or `response.incomplete`. With `streamError`, an `error` event and `response.failed` replace
 * everything after the last delta.
 */
export function responsesEvents(
  turn: ResolvedTurn,
  body: ResponsesRequestBody,
  context: RenderContext,
  streamError?: MockTurn['streamError'],
): SseMessage[] {
  const { random } = context;
  const items = outputItems(turn, body, random);
  const payloads: Record<string, unknown>[] = [];
  const push = (type: string, fields: Record<string, unknown>) => payloads.push({ type, ...fields });
  const shell = (status: string) => ({ ...responseShell(body, context, status), output: [], usage: null });
  push('response.created', { response: shell('in_progress') });
  push('response.in_progress', { response: shell('in_progress') });

  // Where an in-stream error cuts in: after the last delta, with the items finished by then.
  let errorAt = payloads.length;
  let finishedAtError: OutputItem[] = [];
  const finished: OutputItem[] = [];
  const markDelta = () => {
    errorAt = payloads.length;
    finishedAtError = [...finished];
  };

  items.forEach((item, output_index) => {
    const at = { item_id: item.id, output_index };
    if (item.type === 'reasoning') {
      push('response.output_item.added', { output_index, item: { id: item.id, type: 'reasoning', summary: [] } });
      const part = { ...at, summary_index: 0 };
      push('response.reasoning_summary_part.added', { ...part, part: { type: 'summary_text', text: '' } });
      for (const delta of splitText(turn.reasoning, random, 1, 6)) {
        push('response.reasoning_summary_text.delta', { ...part, delta });
        markDelta();
      }
      push('response.reasoning_summary_text.done', { ...part, text: turn.reasoning });
      push('response.reasoning_summary_part.done', { ...part, part: { type: 'summary_text', text: turn.reasoning } });
    } else if (item.type === 'message') {
      push('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', content: [] } });
      const part = { ...at, content_index: 0 };
      if (turn.refusal !== undefined) {
        push('response.content_part.added', { ...part, part: { type: 'refusal', refusal: '' } });
        for (const delta of splitText(turn.refusal, random, 1, 6)) {
          push('response.refusal.delta', { ...part, delta });
          markDelta();
        }
        push('response.refusal.done', { ...part, refusal: turn.refusal });
        push('response.content_part.done', { ...part, part: { type: 'refusal', refusal: turn.refusal } });
      } else {
        push('response.content_part.added', { ...part, part: outputText('') });
        for (const delta of splitText(turn.content, random, 1, 6)) {
          push('response.output_text.delta', { ...part, delta, logprobs: [] });
          markDelta();
        }
        push('response.output_text.done', { ...part, text: turn.content, logprobs: [] });
        push('response.content_part.done', { ...part, part: outputText(turn.content) });
      }
    } else {
      push('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', arguments: '' } });
      const args = typeof item.arguments === 'string' ? item.arguments : '';
      for (const delta of splitText(args, random, 1, 8)) {
        push('response.function_call_arguments.delta', { ...at, delta });
        markDelta();
      }
      push('response.function_call_arguments.done', { ...at, name: item.name, arguments: args });
    }
    push('response.output_item.done', { output_index, item });
    finished.push(item);
  });

  if (streamError) {
    payloads.splice(errorAt);
    const code = streamError.code ?? 'server_error';
    push('error', { code, message: streamError.message, param: null });
    const failed = { ...shell('failed'), output: finishedAtError, error: { code, message: streamError.message } };
    push('response.failed', { response: failed });
  } else {
    const { status, incompleteDetails } = outcome(turn);
    const response = { ...shell(status), incomplete_details: incompleteDetails, output: items, usage: responsesUsage(turn.usage) };
    push(status === 'completed' ? 'response.completed' : 'response.incomplete', { response });
  }
  return payloads.map((payload, sequence_number) => ({
    event: String(payload.type),
    data: JSON.stringify({ ...payload, sequence_number }),
  }));
}

/** The finished output items; ids are drawn first so the stream and the JSON of one seed agree. */
function outputItems(turn: ResolvedTurn, body: ResponsesRequestBody, random: () => number): OutputItem[] {
  const items: OutputItem[] = [];
  const truncated = outcome(turn).status === 'incomplete';
  if (turn.reasoning) {
    const encrypted = body.include?.includes('reasoning.encrypted_content') === true;
    items.push({
      id: `rs_${randomId(random, 32)}`,
      type: 'reasoning',
      summary: [{ type: 'summary_text', text: turn.reasoning }],
      ...(encrypted ? { encrypted_content: `gAAAAA${randomId(random, 64)}` } : {}),
    });
  }
  if (turn.content || !turn.toolCalls.length)
    items.push({
      id: `msg_${randomId(random, 32)}`,
      type: 'message',
      status: 'completed',
      content: [turn.refusal === undefined ? outputText(turn.content) : { type: 'refusal', refusal: turn.refusal }],
      role: 'assistant',
    });
  for (const call of turn.toolCalls)
    items.push({
      id: `fc_${randomId(random, 32)}`,
      type: 'function_call',
      status: 'completed',
      arguments: call.arguments,
      call_id: call.id,
      name: call.name,
    });
  // A truncated answer stops inside its last item.
  const last = items.at(-1);
  if (truncated && last && last.type !== 'reasoning') last.status = 'incomplete';
  return items;
}

function outputText(text: string) {
  return { type: 'output_text', annotations: [], logprobs: [], text };
}

/** `length` and `content_filter` end a response as `incomplete`, with the reason the API gives. */
function outcome(turn: ResolvedTurn): { status: 'completed' | 'incomplete'; incompleteDetails: { reason: string } | null } {
  if (turn.finishReason === 'length') return { status: 'incomplete', incompleteDetails: { reason: 'max_output_tokens' } };
  if (turn.finishReason === 'content_filter') return { status: 'incomplete', incompleteDetails: { reason: 'content_filter' } };
  return { status: 'completed', incompleteDetails: null };
}

/** The response fields besides output and usage, echoing the request's settings as the API does. */
function responseShell(body: ResponsesRequestBody, { id, created }: RenderContext, status: string) {
  return {
    id,
    object: 'response',
    created_at: created,
    status,
    background: false,
    error: null,
    incomplete_details: null,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    model: body.model ?? 'mock-model',
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: body.previous_response_id ?? null,
    reasoning: body.reasoning ?? { effort: null, summary: null },
    store: body.store ?? true,
    temperature: body.temperature ?? 1,
    text: body.text ?? { format: { type: 'text' } },
    tool_choice: body.tool_choice ?? 'auto',
    tools: body.tools ?? [],
    top_p: body.top_p ?? 1,
    truncation: body.truncation ?? 'disabled',
    user: null,
    metadata: body.metadata ?? {},
  };
}

/**
 * What OpenAI rejects in a (resolved) conversation, as its 400 message; undefined for one it takes: a
 * `function_call_output` whose call is not in the input before it, and a reasoning item whose `encrypted_content`
 * this server did not give (`issued`).
 */
export function responsesRequestProblem(body: ResponsesRequestBody, issued: ReadonlySet<string>): string | undefined {
  const calls = new Set<string>();
  for (const item of inputItems(body.input)) {
    if (item.type === 'function_call') calls.add(String(item.call_id));
    else if (item.type === 'function_call_output' && !calls.has(String(item.call_id)))
      return `No tool call found for function call output with call_id ${String(item.call_id)}.`;
    else if (item.type === 'reasoning' && item.encrypted_content !== undefined && !issued.has(String(item.encrypted_content)))
      return `The encrypted content for item ${String(item.id ?? 'reasoning')} could not be verified.`;
  }
  return undefined;
}

/** The `encrypted_content` of an answer's reasoning items, which a later request may send back. */
export function encryptedContents(answer: unknown): string[] {
  const output = isRecord(answer) && Array.isArray(answer.output) ? answer.output.filter(isRecord) : [];
  return output.flatMap((item) => (item.type === 'reasoning' && typeof item.encrypted_content === 'string' ? [item.encrypted_content] : []));
}
