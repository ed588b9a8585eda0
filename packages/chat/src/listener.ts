/**
 * ChatStreamListener: merges Chat Completions chunks, as real providers send them, into a completion.
 *
 * One `pushSse()` per SSE event off the wire, or one `push()` per parsed chunk. The hot path is hand-written checks
 * and string appends (V8 ropes), never a re-scan or re-join of what arrived before, so a call whose arguments come in
 * 100,000 fragments stays linear. Events are only built when someone listens.
 */
import {
  ApiError,
  type FinishReason,
  type HandlersOf,
  type NormalizedEvents,
  ProtocolError,
  ProtocolListener,
  type RetryEvents,
  type StreamEvent,
  StreamIncompleteError,
  type Usage,
} from '@ai4ts/core';
import { isRecord, parseOrText } from '@ai4ts/core/internal';
import type { SseEvent } from '@ai4ts/sse';
import { copyExtra, JsonProgress, mergeExtra, nonEmpty, normalizeUsage } from './merge.js';
import { ThinkTagSplitter } from './think.js';
import type {
  ChatCompletion,
  ChatCompletionChoice,
  ChatCompletionChunk,
  ChatCompletionLogprobs,
  ChatCompletionMessage,
  ChatCompletionMessageToolCall,
} from './types.js';

/** A delta of a refusal (OpenAI structured outputs). */
export interface RefusalEvent {
  type: 'refusal';
  delta: string;
  snapshot: string;
  choice: number;
}

/** Every chunk, after it was merged. */
export interface ChunkEvent {
  type: 'chunk';
  chunk: ChatCompletionChunk;
}

/**
 * The listener's events, by name; each handler gets one event object whose `type` is the event's name: the
 * normalized stream events and `error`, plus chat's own `refusal` and `chunk`, and the handle's `retry`.
 */
export type ChatStreamEvents = Pick<NormalizedEvents, StreamEvent['type'] | 'error'> &
  HandlersOf<RefusalEvent | ChunkEvent> &
  RetryEvents;

/** Options of a {@link ChatStreamListener}. */
export interface ChatStreamListenerOptions {
  /** Move `<think>...</think>` text out of the content into the reasoning. Default true. */
  thinkTags?: boolean | undefined;
  /**
   * Complete at `[DONE]` a choice that never sent a finish_reason, as `stop` (`tool_calls` when calls were
   * streamed), for providers that end that way (the preset quirk `doneWithoutFinishReason`). Default false: such a
   * stream fails with StreamIncompleteError, since a cut proxy can also send `[DONE]` early.
   */
  finishOnDone?: boolean | undefined;
  /**
   * Complete a stream that ends without `[DONE]` once every choice has its finish_reason, for servers that never
   * send it (the preset quirk `endsWithoutDone`). Default false: a stream cut after the finish_reason but before
   * `[DONE]` fails with StreamIncompleteError, since the usage chunk between them may be lost.
   */
  finishOnEnd?: boolean | undefined;
}

/** The merged state of one choice, readable at any moment. */
export interface ChatChoiceState {
  readonly index: number;
  readonly content: string;
  readonly reasoning: string;
  readonly refusal: string | null;
  readonly toolCalls: ChatCompletionMessageToolCall[];
  readonly finishReason: FinishReason | null;
  readonly logprobs: ChatCompletionLogprobs | null;
}

/** The delta fields the listener reads itself; every other field is kept on the message. */
const KNOWN_DELTA_FIELDS: ReadonlySet<string> = new Set([
  'role',
  'content',
  'reasoning_content',
  'reasoning',
  'refusal',
  'tool_calls',
]);
/** The tool-call fragment fields the listener reads itself; every other field is kept on the call. */
const KNOWN_CALL_FIELDS: ReadonlySet<string> = new Set(['index', 'id', 'type', 'function']);

interface ToolCallState {
  /** Position in this choice's turn, from 0 in arrival order. */
  readonly position: number;
  /** The provider's id, or ours when none came before the call started. */
  id: string;
  hasProviderId: boolean;
  name: string;
  arguments: string;
  started: boolean;
  done: boolean;
  /** How far `arguments` was read when checked for being complete JSON (each character is read once). */
  readonly progress: JsonProgress;
  /** The provider's own fields of the call (Gemini's `extra_content`), merged over its fragments. */
  extra: Record<string, unknown> | undefined;
}

class ChoiceState implements ChatChoiceState {
  content = '';
  reasoning = '';
  refusal: string | null = null;
  finishReason: FinishReason | null = null;
  logprobs: ChatCompletionLogprobs | null = null;
  readonly calls: ToolCallState[] = [];
  /** Calls by the provider's `index` field (which may start at 1 or be sparse). */
  readonly byIndex = new Map<number, ToolCallState>();
  readonly byId = new Map<string, ToolCallState>();
  /** Calls whose arguments grew since the last check: a new call checks these, never every earlier call. */
  readonly grown = new Set<ToolCallState>();
  last: ToolCallState | undefined;
  think: ThinkTagSplitter | undefined;
  /** The provider's own fields of the message (OpenRouter's `reasoning_details`), merged over the deltas. */
  extra: Record<string, unknown> | undefined;

  constructor(readonly index: number) {}

  get toolCalls(): ChatCompletionMessageToolCall[] {
    return this.calls.map(toolCallOf);
  }
}

const syntheticId = (position: number) => `ai4ts_call_${position}`;

function toolCallOf(call: ToolCallState): ChatCompletionMessageToolCall {
  return {
    ...copyExtra(call.extra),
    id: call.id || syntheticId(call.position),
    type: 'function',
    function: { name: call.name, arguments: call.arguments || '{}' },
  };
}

/** An id that names a call: empty strings and the string "null" (sent on continuations) do not. */
function realId(id: unknown): string | undefined {
  return typeof id === 'string' && id !== '' && id !== 'null' ? id : undefined;
}

/** What a {@link ChatStreamListener} knows of one stream; a new one for each attempt (see `reset`). */
interface ChatState {
  /** Choices by index; a Map, since a malformed index must not size an array. */
  readonly choices: Map<number, ChoiceState>;
  finishedCount: number;
  lastChunk: ChatCompletionChunk | undefined;
  id: string;
  model: string;
  created: number;
  systemFingerprint: string | undefined;
  usage: Usage | undefined;
}

function initialChatState(): ChatState {
  return {
    choices: new Map(),
    finishedCount: 0,
    lastChunk: undefined,
    id: '',
    model: '',
    created: 0,
    systemFingerprint: undefined,
    usage: undefined,
  };
}

/**
 * Merges Chat Completions chunks into a completion and emits the normalized events (plus `refusal` and `chunk`).
 *
 * The contract, the same for every protocol's listener (docs/protocols.md):
 * - `status` is `pending` until the first chunk, then `streaming`; `completed` when `data: [DONE]` arrives (or at
 *   `end()` with `finishOnEnd`), provided every choice that appeared has a finish_reason (a `length` or `content_filter` finish is a
 *   completed stream with that finish reason); `failed` after an error event, bad data, an early end or `fail()`.
 * - `pushSse(event)` and `push(chunk)` record bad server data (ProtocolError), an in-stream error (ApiError) and a
 *   `[DONE]` before the finish_reason (StreamIncompleteError): status `failed`, an `error` event, and the error
 *   thrown. After `completed` or `failed`, input is ignored.
 * - `end()` returns the completion, or records and throws StreamIncompleteError (no `[DONE]`, or a choice never
 *   finished), or throws the recorded error.
 * - `fail(error)` records a failure from outside and returns it as an Ai4tsError; once failed, the first error.
 *   Text held back as a possible `<think>` tag joins the partial; calls still open never get `tool_call.done`.
 * Every error's `partial` is {@link completion}: a completion of the final shape holding what arrived.
 *
 * Fields a provider adds to a delta or a tool-call fragment (OpenRouter's `reasoning_details`, Gemini's
 * `extra_content`) are kept on the message and on the call: arrays concatenated, objects merged, other values
 * replaced (a `null` carries nothing), so the turn can go back to the provider exactly as it came.
 *
 * ```ts
 * const listener = new ChatStreamListener();
 * listener.on('content', (e) => process.stdout.write(e.delta));
 * for (const event of sseEvents) listener.pushSse(event);
 * const completion = listener.end(); // { object: 'chat.completion', choices: [...], usage }
 * ```
 */
export class ChatStreamListener extends ProtocolListener<ChatState, ChatCompletion, ChatStreamEvents> {
  readonly #thinkTags: boolean;
  readonly #finishOnDone: boolean;
  readonly #finishOnEnd: boolean;
  /** A whole `chat.completion` arrived (a server that ignored `stream: true`): complete without `[DONE]`. */
  #whole = false;

  constructor(options: ChatStreamListenerOptions = {}) {
    super(initialChatState);
    this.#thinkTags = options.thinkTags ?? true;
    this.#finishOnDone = options.finishOnDone ?? false;
    this.#finishOnEnd = options.finishOnEnd ?? false;
  }

  /** The last chunk pushed. */
  get lastChunk(): ChatCompletionChunk | undefined {
    return this.state.lastChunk;
  }

  /** Choice 0's text so far (without `<think>` text). */
  get content(): string {
    return this.state.choices.get(0)?.content ?? '';
  }

  /** Choice 0's reasoning so far. */
  get reasoning(): string {
    return this.state.choices.get(0)?.reasoning ?? '';
  }

  /** Choice 0's tool calls so far, arguments as streamed (`"{}"` while none). */
  get toolCalls(): ChatCompletionMessageToolCall[] {
    return this.state.choices.get(0)?.toolCalls ?? [];
  }

  /** Choice 0's finish reason (`stop` reported as `tool_calls` when calls were streamed). */
  get finishReason(): FinishReason | null {
    return this.state.choices.get(0)?.finishReason ?? null;
  }

  /** The usage reported so far. */
  get usage(): Usage | undefined {
    return this.state.usage;
  }

  /** Every choice seen so far, by index (n > 1). */
  get choices(): ChatChoiceState[] {
    return this.#present();
  }

  /** One choice's state, or undefined when it has not appeared. */
  choice(index: number): ChatChoiceState | undefined {
    return this.state.choices.get(index);
  }

  /** The completion so far, in the shape of the final `chat.completion` (also the shape of `error.partial`). */
  get completion(): ChatCompletion {
    const { id, created, model, systemFingerprint, usage } = this.state;
    const states = this.#present();
    const completion: ChatCompletion = {
      id,
      object: 'chat.completion',
      created,
      model,
      choices: (states.length ? states : [new ChoiceState(0)]).map(choiceOf),
    };
    if (systemFingerprint) completion.system_fingerprint = systemFingerprint;
    if (usage) completion.usage = usage;
    return completion;
  }

  /**
   * Feeds one SSE event off the wire: `data: [DONE]` completes the stream, `event: error` and data that is not
   * JSON fail it, empty data is skipped, anything else is parsed and {@link push}ed.
   *
   * @throws ApiError for an `event: error` frame, ProtocolError for data that is not JSON, StreamIncompleteError for
   *   a `[DONE]` before every finish_reason (each recorded first, `partial` the completion so far).
   */
  override pushSse(event: SseEvent): void {
    if (this.hasEnded()) return;
    const data = event.data;
    // vLLM and SGLang: `event: error` with the flat `{code, message}` as data.
    if (event.event === 'error') throw this.fail(ApiError.fromStreamError(parseOrText(data), undefined));
    if (data === '[DONE]') {
      if (this.#finishOnDone) for (const state of this.state.choices.values()) this.#finish(state, 'stop');
      if (!this.#allFinished()) {
        throw this.fail(new StreamIncompleteError('The chat stream sent [DONE] before its finish_reason'));
      }
      this.#settle();
      this.complete();
      return;
    }
    if (data === '') return;
    let chunk: unknown;
    try {
      chunk = JSON.parse(data);
    } catch (cause) {
      throw this.fail(new ProtocolError('The chat stream sent data that is not JSON', { line: data, cause }));
    }
    this.push(chunk);
  }

  /**
   * Merges one parsed chunk (a whole `chat.completion`, with `message` for `delta`, is read the same way).
   *
   * @throws ApiError for an error object (`{"error": {...}}`, OpenRouter after HTTP 200), ProtocolError for a chunk
   *   that is not an object (each recorded first, `partial` the completion so far).
   */
  push(data: unknown): void {
    if (this.hasEnded()) return;
    if (!isRecord(data)) {
      throw this.fail(new ProtocolError('A chat chunk must be a JSON object', { line: JSON.stringify(data) }));
    }
    if (data.error !== undefined && data.error !== null) throw this.fail(ApiError.fromStreamError(data, undefined));
    this.markStreaming();
    if (data.object === 'chat.completion') this.#whole = true;
    // Checked field by field below; the chunk is kept as the provider sent it.
    const chunk = data as ChatCompletionChunk;
    const state = this.state;
    state.lastChunk = chunk;
    if (state.id === '' && typeof data.id === 'string') state.id = data.id;
    if (state.model === '' && typeof data.model === 'string') state.model = data.model;
    if (state.created === 0 && typeof data.created === 'number') state.created = data.created;
    if (typeof data.system_fingerprint === 'string') state.systemFingerprint = data.system_fingerprint;
    const choices = data.choices;
    if (Array.isArray(choices)) {
      for (const choice of choices) if (isRecord(choice)) this.#mergeChoice(choice);
    }
    if (isRecord(data.usage)) this.#setUsage(data.usage);
    if (this.hears('chunk')) this.emit('chunk', { type: 'chunk', chunk });
  }

  /** The completion so far; text held back as a possible `<think>` tag is text after all, so it is released. */
  protected override partial(): ChatCompletion {
    for (const state of this.state.choices.values()) this.#flushThink(state);
    return this.completion;
  }

  protected override result(): ChatCompletion {
    return this.completion;
  }

  /**
   * A stream is whole only at `[DONE]`: a choice that never finished is a StreamIncompleteError, and so is a
   * stream that ends after every finish_reason but before `[DONE]` (its usage chunk may be lost), unless
   * `finishOnEnd` (a server that never sends `[DONE]`) or the answer was one whole `chat.completion`: then held-back text is released and open calls are done.
   */
  protected override endedEarly(): StreamIncompleteError | undefined {
    if (!this.#allFinished()) return new StreamIncompleteError('The chat stream ended before its finish_reason');
    if (!this.#finishOnEnd && !this.#whole) return new StreamIncompleteError('The chat stream ended before [DONE]');
    this.#settle();
    return undefined;
  }

  #allFinished(): boolean {
    const { choices, finishedCount } = this.state;
    return choices.size > 0 && finishedCount === choices.size;
  }

  /** Before completing: text held back as a possible `<think>` tag is released, and open calls are done. */
  #settle(): void {
    for (const state of this.state.choices.values()) {
      this.#flushThink(state);
      this.#closeCalls(state);
    }
  }

  /** The choices that appeared, in index order. */
  #present(): ChoiceState[] {
    return [...this.state.choices.values()].sort((a, b) => a.index - b.index);
  }

  #stateOf(index: number): ChoiceState {
    const choices = this.state.choices;
    let state = choices.get(index);
    if (!state) {
      state = new ChoiceState(index);
      choices.set(index, state);
    }
    return state;
  }

  #mergeChoice(choice: Record<string, unknown>): void {
    const state = this.#stateOf(typeof choice.index === 'number' ? choice.index : 0);
    // A whole `chat.completion` (a server that ignored `stream: true`) carries `message` where chunks carry `delta`.
    const delta = choice.delta === undefined ? choice.message : choice.delta;
    if (isRecord(delta)) {
      const content = delta.content;
      if (typeof content === 'string') {
        if (content !== '') this.#addContent(state, content);
      } else if (Array.isArray(content)) this.#addContentParts(state, content);
      const reasoning = nonEmpty(delta.reasoning_content) ?? nonEmpty(delta.reasoning);
      if (reasoning !== undefined) this.#appendReasoning(state, reasoning);
      const refusal = nonEmpty(delta.refusal);
      if (refusal !== undefined) this.#appendRefusal(state, refusal);
      const toolCalls = delta.tool_calls;
      if (Array.isArray(toolCalls)) {
        for (const fragment of toolCalls) if (isRecord(fragment)) this.#mergeToolCall(state, fragment);
      }
      state.extra = mergeExtra(state.extra, delta, KNOWN_DELTA_FIELDS);
    }
    if (isRecord(choice.logprobs)) appendLogprobs(state, choice.logprobs);
    const finishReason = nonEmpty(choice.finish_reason);
    if (finishReason !== undefined) this.#finish(state, finishReason);
    if (isRecord(choice.usage)) this.#setUsage(choice.usage);
  }

  #addContent(state: ChoiceState, text: string): void {
    if (!this.#thinkTags) {
      this.#appendContent(state, text);
      return;
    }
    state.think ??= new ThinkTagSplitter();
    const think = state.think;
    if (think.idle && text.indexOf('<') === -1) {
      if (think.reasoning) this.#appendReasoning(state, text);
      else this.#appendContent(state, text);
    } else {
      think.push(text, (piece, isReasoning) =>
        isReasoning ? this.#appendReasoning(state, piece) : this.#appendContent(state, piece),
      );
    }
  }

  /** Mistral's content parts: `{type:'text', text}` and `{type:'thinking', thinking: [{type:'text', text}] | string}`. */
  #addContentParts(state: ChoiceState, parts: unknown[]): void {
    for (const part of parts) {
      if (!isRecord(part)) continue;
      if (part.type === 'text' && typeof part.text === 'string' && part.text !== '') this.#addContent(state, part.text);
      else if (part.type === 'thinking') {
        const thinking = part.thinking;
        if (typeof thinking === 'string' && thinking !== '') this.#appendReasoning(state, thinking);
        else if (Array.isArray(thinking)) {
          for (const inner of thinking) {
            if (isRecord(inner) && typeof inner.text === 'string' && inner.text !== '') {
              this.#appendReasoning(state, inner.text);
            }
          }
        }
      }
    }
  }

  #appendContent(state: ChoiceState, delta: string): void {
    state.content += delta;
    if (this.hears('content')) {
      this.emit('content', { type: 'content', delta, snapshot: state.content, choice: state.index });
    }
  }

  #appendReasoning(state: ChoiceState, delta: string): void {
    state.reasoning += delta;
    if (this.hears('reasoning')) {
      this.emit('reasoning', { type: 'reasoning', delta, snapshot: state.reasoning, choice: state.index });
    }
  }

  #appendRefusal(state: ChoiceState, delta: string): void {
    state.refusal = (state.refusal ?? '') + delta;
    if (this.hears('refusal')) {
      this.emit('refusal', { type: 'refusal', delta, snapshot: state.refusal, choice: state.index });
    }
  }

  #flushThink(state: ChoiceState): void {
    state.think?.flush((piece, isReasoning) =>
      isReasoning ? this.#appendReasoning(state, piece) : this.#appendContent(state, piece),
    );
  }

  /** Finds the call a fragment belongs to (see the precise rules in docs/chat.md) and appends to it. */
  #mergeToolCall(state: ChoiceState, fragment: Record<string, unknown>): void {
    const id = realId(fragment.id);
    const fn = isRecord(fragment.function) ? fragment.function : undefined;
    let call: ToolCallState | undefined;
    if (typeof fragment.index === 'number') {
      call = state.byIndex.get(fragment.index);
      // A different id at a known index is a new call reusing the index.
      if (call && id !== undefined && call.hasProviderId && state.byId.get(id) !== call) call = undefined;
      if (!call) {
        call = (id !== undefined && state.byId.get(id)) || this.#openCall(state);
        state.byIndex.set(fragment.index, call);
      }
    } else {
      call = id !== undefined ? state.byId.get(id) : state.last;
      call ??= this.#openCall(state);
    }
    if (id !== undefined && !call.hasProviderId) {
      call.hasProviderId = true;
      state.byId.set(id, call);
      if (!call.started) call.id = id;
    }
    call.extra = mergeExtra(call.extra, fragment, KNOWN_CALL_FIELDS);
    if (fn) {
      if (call.name === '') call.name = nonEmpty(fn.name) ?? '';
      const args = fn.arguments;
      const delta = typeof args === 'string' ? args : isRecord(args) ? JSON.stringify(args) : '';
      if (delta !== '') {
        call.arguments += delta;
        if (!call.done) state.grown.add(call);
        if (call.started && !call.done && this.hears('tool_call.delta')) {
          this.emit('tool_call.delta', {
            type: 'tool_call.delta',
            index: call.position,
            id: call.id,
            delta,
            choice: state.index,
          });
        }
      }
    }
    if (!call.started && call.name !== '') this.#startCall(state, call);
  }

  /** A new call: earlier calls whose arguments already form complete JSON are done, in their order. */
  #openCall(state: ChoiceState): ToolCallState {
    if (state.grown.size === 1) {
      // The common case (calls one after the other): no array, no sort.
      const [earlier] = state.grown;
      state.grown.clear();
      if (earlier && !earlier.done && earlier.progress.complete(earlier.arguments)) this.#doneCall(state, earlier);
    } else if (state.grown.size > 1) {
      const grown = [...state.grown].sort((a, b) => a.position - b.position);
      state.grown.clear();
      for (const earlier of grown) {
        if (!earlier.done && earlier.progress.complete(earlier.arguments)) this.#doneCall(state, earlier);
      }
    }
    const call: ToolCallState = {
      position: state.calls.length,
      id: '',
      hasProviderId: false,
      name: '',
      arguments: '',
      started: false,
      done: false,
      progress: new JsonProgress(),
      extra: undefined,
    };
    state.calls.push(call);
    state.last = call;
    return call;
  }

  #startCall(state: ChoiceState, call: ToolCallState): void {
    call.started = true;
    call.id ||= syntheticId(call.position);
    const choice = state.index;
    this.emit('tool_call.start', { type: 'tool_call.start', index: call.position, id: call.id, name: call.name, choice });
    // Arguments that came before the name are one delta.
    if (call.arguments !== '' && this.hears('tool_call.delta')) {
      this.emit('tool_call.delta', {
        type: 'tool_call.delta',
        index: call.position,
        id: call.id,
        delta: call.arguments,
        choice,
      });
    }
  }

  #doneCall(state: ChoiceState, call: ToolCallState): void {
    if (!call.started) this.#startCall(state, call);
    call.done = true;
    this.emit('tool_call.done', {
      type: 'tool_call.done',
      index: call.position,
      id: call.id,
      name: call.name,
      arguments: call.arguments || '{}',
      choice: state.index,
    });
  }

  /** Marks open calls done, unless the choice was cut (length, content_filter): those calls are not complete. */
  #closeCalls(state: ChoiceState): void {
    if (state.finishReason === 'length' || state.finishReason === 'content_filter') return;
    for (const call of state.calls) if (!call.done) this.#doneCall(state, call);
  }

  #finish(state: ChoiceState, reason: string): void {
    if (state.finishReason !== null) return; // some providers repeat it on the usage chunk
    this.#flushThink(state);
    state.finishReason = reason === 'stop' && state.calls.length > 0 ? 'tool_calls' : reason;
    this.state.finishedCount++;
    this.#closeCalls(state);
    this.emit('finish', { type: 'finish', finishReason: state.finishReason, choice: state.index });
  }

  #setUsage(raw: Record<string, unknown>): void {
    const usage = normalizeUsage(raw);
    const prev = this.state.usage;
    if (
      prev &&
      prev.prompt_tokens === usage.prompt_tokens &&
      prev.completion_tokens === usage.completion_tokens &&
      prev.total_tokens === usage.total_tokens
    ) {
      return;
    }
    this.state.usage = usage;
    this.emit('usage', { type: 'usage', usage, raw });
  }
}

function appendLogprobs(state: ChoiceState, logprobs: Record<string, unknown>): void {
  state.logprobs ??= { content: null, refusal: null };
  const target = state.logprobs;
  for (const key of ['content', 'refusal'] as const) {
    const items = logprobs[key];
    if (!Array.isArray(items)) continue;
    target[key] ??= [];
    const list = target[key];
    for (const item of items) list.push(item);
  }
}

function choiceOf(state: ChoiceState): ChatCompletionChoice {
  const message: ChatCompletionMessage = {
    ...copyExtra(state.extra),
    role: 'assistant',
    content: state.content === '' ? null : state.content,
  };
  if (state.reasoning !== '') message.reasoning_content = state.reasoning;
  if (state.refusal !== null) message.refusal = state.refusal;
  if (state.calls.length > 0) message.tool_calls = state.toolCalls;
  const choice: ChatCompletionChoice = { index: state.index, message, finish_reason: state.finishReason };
  if (state.logprobs) choice.logprobs = state.logprobs;
  return choice;
}
