/**
 * OpenAI Chat Completions as the scripted model answers it: one scripted turn becomes either a `chat.completion`
 * or the `chat.completion.chunk` sequence a real provider streams, fragmented the way providers fragment.
 */
import type { SseMessage } from '@ai4ts/sse';
import { splitText } from './fragment.js';
import { isRecord, type MockTurn, type RenderContext, type ResolvedTurn } from './turn.js';

/** A message of a Chat Completions request, as far as scripts need to read it. */
export interface ChatMessage {
  role: string;
  content?: unknown;
  reasoning_content?: string;
  tool_calls?: { id: string; type?: string; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
  [key: string]: unknown;
}

/** The body of a `POST /v1/chat/completions` request. */
export interface ChatRequestBody {
  model?: string;
  messages: ChatMessage[];
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  tools?: unknown[];
  [key: string]: unknown;
}

/** The non-streamed answer: a `chat.completion` object. */
export function chatCompletion(turn: ResolvedTurn, body: ChatRequestBody, { id, created }: RenderContext) {
  return {
    id,
    object: 'chat.completion',
    created,
    model: body.model ?? 'mock-model',
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: (turn.content === '' && turn.toolCalls.length) || turn.refusal !== undefined ? null : turn.content,
          ...(turn.refusal !== undefined ? { refusal: turn.refusal } : {}),
          ...(turn.reasoning ? { reasoning_content: turn.reasoning } : {}),
          ...(turn.toolCalls.length
            ? {
                tool_calls: turn.toolCalls.map((call) => ({
                  id: call.id,
                  type: 'function',
                  function: { name: call.name, arguments: call.arguments },
                })),
              }
            : {}),
        },
        finish_reason: turn.finishReason,
        logprobs: null,
      },
    ],
    usage: turn.usage,
  };
}

/**
 * The streamed answer: the `chat.completion.chunk` events in order, ending in `data: [DONE]`. Reasoning and
 * content come in deltas of 1-6 characters; parallel tool calls start in index order but their argument fragments
 * (1-8 characters, cut anywhere) interleave; a usage chunk with `choices: []` follows the finish chunk when
 * `stream_options.include_usage` is set. With `streamError`, `data: {"error": ...}` replaces everything after
 * the deltas.
 */
export function chatEvents(
  turn: ResolvedTurn,
  body: ChatRequestBody,
  { id, created, random }: RenderContext,
  streamError?: MockTurn['streamError'],
): SseMessage[] {
  const includeUsage = body.stream_options?.include_usage === true;
  const chunk = (delta: Record<string, unknown>, finishReason: string | null = null) => ({
    id,
    object: 'chat.completion.chunk',
    created,
    model: body.model ?? 'mock-model',
    choices: [{ index: 0, delta, finish_reason: finishReason, logprobs: null }],
    ...(includeUsage ? { usage: null } : {}),
  });

  const chunks: Record<string, unknown>[] = [chunk({ role: 'assistant', content: '' })];
  for (const piece of splitText(turn.reasoning, random, 1, 6)) chunks.push(chunk({ reasoning_content: piece }));
  for (const piece of splitText(turn.content, random, 1, 6)) chunks.push(chunk({ content: piece }));
  for (const piece of splitText(turn.refusal ?? '', random, 1, 6)) chunks.push(chunk({ refusal: piece }));

  const fragments = turn.toolCalls.map((call) => splitText(call.arguments, random, 1, 8));
  const sent = turn.toolCalls.map(() => 0);
  let started = 0;
  for (;;) {
    // Calls start in index order; any started call with fragments left may send next.
    const ready = fragments.flatMap((list, index) => (index < started && (sent[index] ?? 0) < list.length ? [index] : []));
    const canStart = started < turn.toolCalls.length;
    if (!ready.length && !canStart) break;
    const pick = Math.floor(random() * (ready.length + (canStart ? 1 : 0)));
    const index = ready[pick];
    if (index === undefined) {
      const call = turn.toolCalls[started];
      chunks.push(
        chunk({
          tool_calls: [
            { index: started, id: call?.id, type: 'function', function: { name: call?.name, arguments: '' } },
          ],
        }),
      );
      started++;
    } else {
      const piece = fragments[index]?.[sent[index] ?? 0];
      sent[index] = (sent[index] ?? 0) + 1;
      chunks.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
    }
  }

  const data = (payload: unknown): SseMessage => ({ data: JSON.stringify(payload) });
  // OpenAI sends the error as a plain data event and no [DONE] after it.
  if (streamError) return [...chunks.map(data), data({ error: streamError })];
  chunks.push(chunk({}, turn.finishReason));
  if (includeUsage)
    chunks.push({ id, object: 'chat.completion.chunk', created, model: body.model ?? 'mock-model', choices: [], usage: turn.usage });
  return [...chunks.map(data), { data: '[DONE]' }];
}

/** What a Chat Completions answer can be: a JSON object with a `messages` array. */
export function isChatBody(body: unknown): body is ChatRequestBody {
  return isRecord(body) && Array.isArray(body.messages);
}

/**
 * What OpenAI rejects in a conversation, as its 400 message; undefined for one it takes: a `tool` message that answers
 * no call of the assistant message before it, and an assistant's `tool_calls` not each answered by the tool messages
 * right after it.
 */
export function chatRequestProblem(body: ChatRequestBody): string | undefined {
  let open: string[] | undefined;
  for (const [index, message] of body.messages.entries()) {
    if (message.role === 'tool') {
      const at = open?.indexOf(String(message.tool_call_id)) ?? -1;
      if (!open || at < 0)
        return `Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'. (messages[${index}])`;
      open.splice(at, 1);
      continue;
    }
    if (open?.length)
      return `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${open.join(', ')}`;
    open = message.role === 'assistant' && Array.isArray(message.tool_calls) ? message.tool_calls.map((call) => call.id) : undefined;
  }
  if (open?.length)
    return `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${open.join(', ')}`;
  return undefined;
}
