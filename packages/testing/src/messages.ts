/**
 * Anthropic Messages as the scripted model answers it: one scripted turn becomes either a `message` object or the
 * event sequence the real API streams (`message_start`, `content_block_start`/`delta`/`stop`, `ping`,
 * `message_delta`, `message_stop`), with the deltas fragmented the way providers fragment.
 */
import type { SseMessage } from '@ai4ts/sse';
import { splitText } from './fragment.js';
import { isRecord, type MockTurn, type RenderContext, type ResolvedTurn, randomId, usageDetail } from './turn.js';

/** A content block of a Messages request (`text`, `thinking`, `tool_use`, `tool_result`, `image`…). */
export interface MessagesContentBlock {
  type: string;
  [key: string]: unknown;
}

/** A message of a Messages request, as far as scripts need to read it. */
export interface MessagesInputMessage {
  role: string;
  content: string | MessagesContentBlock[];
  [key: string]: unknown;
}

/** The body of a `POST /v1/messages` request. */
export interface MessagesRequestBody {
  model?: string;
  max_tokens: number;
  messages: MessagesInputMessage[];
  system?: unknown;
  stream?: boolean;
  tools?: unknown[];
  [key: string]: unknown;
}

/** What a Messages answer can be: a JSON object with a `messages` array and a numeric `max_tokens`, as the API requires. */
export function isMessagesBody(body: unknown): body is MessagesRequestBody {
  return isRecord(body) && Array.isArray(body.messages) && typeof body.max_tokens === 'number';
}

/** The text the usage estimate counts: system prompt and messages. */
export function messagesPrompt(body: MessagesRequestBody): string {
  return JSON.stringify([body.system ?? '', body.messages]);
}

/** The Anthropic error type the API uses for an HTTP status. */
export function messagesErrorType(status: number): string {
  const types: Record<number, string> = {
    400: 'invalid_request_error',
    401: 'authentication_error',
    403: 'permission_error',
    404: 'not_found_error',
    413: 'request_too_large',
    429: 'rate_limit_error',
    529: 'overloaded_error',
  };
  return types[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error');
}

/** An Anthropic error body: `{type: 'error', error: {type, message}}`. */
export function messagesError(type: string, message: string) {
  return { type: 'error', error: { type, message } };
}

type ContentBlock =
  | { type: 'redacted_thinking'; data: string }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> };

/** The non-streamed answer: a `message` object. */
export function messageObject(turn: ResolvedTurn, body: MessagesRequestBody, context: RenderContext) {
  return {
    ...messageShell(body, context),
    content: contentBlocks(turn, context.random),
    stop_reason: stopReason(turn.finishReason),
    usage: usageOf(turn, turn.usage.completion_tokens),
  };
}

/**
 * The streamed answer: `message_start`, then each content block (thinking with its `signature_delta`, text,
 * `tool_use` with `input_json_delta`s cut anywhere; one after another, as the API sends them) from
 * `content_block_start` to `content_block_stop`, a `ping` after the first block starts, `message_delta` with the
 * stop reason and the output tokens, and `message_stop`. Text and thinking come in deltas of 1-6 characters,
 * arguments in fragments of 1-8 after an empty first one. With `streamError`, an `error` event replaces everything
 * after the last delta.
 */
export function messagesEvents(
  turn: ResolvedTurn,
  body: MessagesRequestBody,
  context: RenderContext,
  streamError?: MockTurn['streamError'],
): SseMessage[] {
  const { random } = context;
  const blocks = contentBlocks(turn, random);
  const events: SseMessage[] = [];
  const push = (type: string, fields: Record<string, unknown> = {}) =>
    events.push({ event: type, data: JSON.stringify({ type, ...fields }) });

  push('message_start', {
    message: { ...messageShell(body, context), content: [], stop_reason: null, usage: usageOf(turn, 1) },
  });
  if (!blocks.length) push('ping');
  // Where an in-stream error cuts in: after the last delta.
  let errorAt = events.length;
  const delta = (index: number, fields: Record<string, unknown>) => {
    push('content_block_delta', { index, delta: fields });
    errorAt = events.length;
  };

  blocks.forEach((block, index) => {
    if (block.type === 'redacted_thinking') {
      // It comes whole in its start event.
      push('content_block_start', { index, content_block: block });
      if (index === 0) push('ping');
    } else if (block.type === 'thinking') {
      push('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } });
      if (index === 0) push('ping');
      for (const thinking of splitText(block.thinking, random, 1, 6)) delta(index, { type: 'thinking_delta', thinking });
      delta(index, { type: 'signature_delta', signature: block.signature });
    } else if (block.type === 'text') {
      push('content_block_start', { index, content_block: { type: 'text', text: '' } });
      if (index === 0) push('ping');
      for (const text of splitText(block.text, random, 1, 6)) delta(index, { type: 'text_delta', text });
    } else {
      push('content_block_start', { index, content_block: { ...block, input: {} } });
      if (index === 0) push('ping');
      const args = turn.toolCalls.find((call) => call.id === block.id)?.arguments ?? '';
      // The API opens every tool input with an empty fragment.
      for (const partial_json of ['', ...splitText(args, random, 1, 8)]) delta(index, { type: 'input_json_delta', partial_json });
    }
    push('content_block_stop', { index });
  });

  if (streamError) {
    events.splice(errorAt);
    push('error', { error: { type: streamError.type ?? 'api_error', message: streamError.message } });
    return events;
  }
  push('message_delta', {
    delta: { stop_reason: stopReason(turn.finishReason), stop_sequence: null },
    usage: { output_tokens: turn.usage.completion_tokens },
  });
  push('message_stop');
  return events;
}

/** Thinking, text and tool_use blocks; the signature is drawn first so the stream and the JSON of one seed agree. */
function contentBlocks(turn: ResolvedTurn, random: () => number): ContentBlock[] {
  const blocks: ContentBlock[] = [];
  if (turn.redactedThinking !== undefined) blocks.push({ type: 'redacted_thinking', data: turn.redactedThinking });
  if (turn.reasoning)
    blocks.push({ type: 'thinking', thinking: turn.reasoning, signature: turn.signature ?? `Eq${randomId(random, 94)}` });
  // The API never answers with an empty text block (and rejects one sent back), except for an empty turn.
  if (turn.content) blocks.push({ type: 'text', text: turn.content });
  for (const call of turn.toolCalls) blocks.push({ type: 'tool_use', id: call.id, name: call.name, input: parseInput(call.arguments) });
  return blocks;
}

/** Chat's finish reasons in the Messages vocabulary; anything else (`pause_turn`, `refusal`…) is sent as given. */
function stopReason(finishReason: string): string {
  const reasons: Record<string, string> = {
    stop: 'end_turn',
    tool_calls: 'tool_use',
    length: 'max_tokens',
    content_filter: 'refusal',
  };
  return reasons[finishReason] ?? finishReason;
}

function messageShell(body: MessagesRequestBody, { id }: RenderContext) {
  return { id, type: 'message', role: 'assistant', model: body.model ?? 'mock-model', content: [], stop_reason: null, stop_sequence: null };
}

/** Anthropic's `input_tokens` counts only the input after the last cache breakpoint: cache reads and writes apart. */
function usageOf(turn: ResolvedTurn, outputTokens: number) {
  const read = usageDetail(turn.usage, 'prompt_tokens_details', 'cached_tokens');
  const written = usageDetail(turn.usage, 'prompt_tokens_details', 'cache_creation_tokens');
  return {
    input_tokens: turn.usage.prompt_tokens - read - written,
    cache_creation_input_tokens: written,
    cache_read_input_tokens: read,
    output_tokens: outputTokens,
  };
}

/** A tool_use block's `input` is an object; arguments that are not a JSON object become `{}`. */
function parseInput(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    return isRecord(value) ? value : {};
  } catch {
    return {};
  }
}

/**
 * The turn as a Messages server answers it: a structured answer (`object`) is the input of the tool the request
 * forces with `tool_choice: { type: 'tool', name }` (without `output_config.format`, the answer is the text); a
 * refusal is a `refusal` stop reason with the refusal as the text.
 */
export function messagesTurn(turn: MockTurn, body: MessagesRequestBody): MockTurn {
  if (turn.refusal !== undefined) return { ...turn, refusal: undefined, content: turn.refusal, finishReason: 'refusal' };
  const choice = body.tool_choice;
  const format = isRecord(body.output_config) ? body.output_config.format : undefined;
  if (turn.object === undefined || format !== undefined || !isRecord(choice) || choice.type !== 'tool') return turn;
  const { object, ...rest } = turn;
  const name = typeof choice.name === 'string' ? choice.name : '';
  const input = isRecord(object) ? object : {};
  return { ...rest, toolCalls: [...(turn.toolCalls ?? []), { name, arguments: input }] };
}

const THINKING_FIRST =
  'When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable `thinking`.';

/**
 * What Anthropic rejects in a conversation, as its 400 message; undefined for one it takes: a `tool_result` without
 * its `tool_use` in the assistant message before, a `tool_use` without its `tool_result` in the user message after,
 * a `thinking` block whose signature (or a `redacted_thinking` block whose data) this server did not give (`issued`),
 * and with thinking enabled, a last assistant message with tool use that does not start with thinking.
 */
export function messagesRequestProblem(body: MessagesRequestBody, issued: ReadonlySet<string>): string | undefined {
  const blocksOf = (message: MessagesInputMessage | undefined) => (Array.isArray(message?.content) ? message.content : []);
  const ids = (message: MessagesInputMessage | undefined, type: string, field: string) =>
    blocksOf(message).flatMap((block) => (block.type === type ? [String(block[field])] : []));
  for (const [index, message] of body.messages.entries()) {
    const uses = message.role === 'assistant' ? ids(message, 'tool_use', 'id') : [];
    for (const [n, block] of blocksOf(message).entries()) {
      if (block.type === 'thinking' && (typeof block.signature !== 'string' || block.signature === ''))
        return `messages.${index}.content.${n}.thinking.signature: Field required`;
      if (block.type === 'thinking' && !issued.has(String(block.signature)))
        return `messages.${index}.content.${n}: Invalid \`signature\` in \`thinking\` block`;
      if (block.type === 'redacted_thinking' && !issued.has(String(block.data)))
        return `messages.${index}.content.${n}: Invalid \`data\` in \`redacted_thinking\` block`;
    }
    if (message.role === 'user') {
      const before = body.messages[index - 1];
      const called = before?.role === 'assistant' ? ids(before, 'tool_use', 'id') : [];
      const unexpected = ids(message, 'tool_result', 'tool_use_id').filter((id) => !called.includes(id));
      if (unexpected.length)
        return `messages.${index}.content: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${unexpected.join(', ')}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
    }
    const after = body.messages[index + 1];
    const answered = after?.role === 'user' ? ids(after, 'tool_result', 'tool_use_id') : [];
    const unanswered = uses.filter((id) => !answered.includes(id));
    if (unanswered.length)
      return `messages.${index}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${unanswered.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`;
  }
  const thinking = isRecord(body.thinking) && body.thinking.type === 'enabled';
  const last = body.messages.findLastIndex((message) => message.role === 'assistant');
  const lastBlocks = blocksOf(body.messages[last]);
  const first = lastBlocks[0]?.type;
  if (thinking && lastBlocks.some((block) => block.type === 'tool_use') && first !== 'thinking' && first !== 'redacted_thinking')
    return `messages.${last}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${String(first)}\`. ${THINKING_FIRST}`;
  return undefined;
}

/** The thinking signatures and redacted data of an answer, which a later request may send back. */
export function thinkingSeals(answer: unknown): string[] {
  const content = isRecord(answer) && Array.isArray(answer.content) ? answer.content.filter(isRecord) : [];
  return content.flatMap((block) =>
    block.type === 'thinking' && typeof block.signature === 'string'
      ? [block.signature]
      : block.type === 'redacted_thinking' && typeof block.data === 'string'
        ? [block.data]
        : [],
  );
}
