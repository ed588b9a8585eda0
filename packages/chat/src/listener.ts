/**
 * ChatStreamListener: merges Chat Completions chunks, as real providers send them, into a completion.
 *
 * One `push()` per parsed chunk. The hot path is hand-written checks and string appends (V8 ropes), never a
 * re-scan or re-join of what arrived before, so a call whose arguments come in 100,000 fragments stays linear.
 * Events are only built when someone listens.
 */
import { type Ai4tsError, ApiError, type ContentEvent, type ErrorEvent, type FinishEvent, type FinishReason, ProtocolError, type ReasoningEvent, type ToolCallDeltaEvent, type ToolCallDoneEvent, type ToolCallStartEvent, type Usage, type UsageEvent } from '@ai4ts/core';
import { isRecord } from '@ai4ts/core/internal';
import { EventEmitter } from 'eventemitter3';
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

/** Everything a chat stream emits, except `error` (a failure ends iteration by throwing instead). */
export type ChatStreamEvent =
  | ContentEvent
  | ReasoningEvent
  | RefusalEvent
  | ToolCallStartEvent
  | ToolCallDeltaEvent
  | ToolCallDoneEvent
  | UsageEvent
  | FinishEvent
  | ChunkEvent;

/** The listener's events, by name; each handler gets one event object whose `type` is the event's name. */
export interface ChatStreamEvents {
  content: (event: ContentEvent) => void;
  reasoning: (event: ReasoningEvent) => void;
  refusal: (event: RefusalEvent) => void;
  'tool_call.start': (event: ToolCallStartEvent) => void;
  'tool_call.delta': (event: ToolCallDeltaEvent) => void;
  'tool_call.done': (event: ToolCallDoneEvent) => void;
  usage: (event: UsageEvent) => void;
  finish: (event: FinishEvent) => void;
  chunk: (event: ChunkEvent) => void;
  error: (event: ErrorEvent) => void;
}

/** The names of the events a chat stream emits. */
export const CHAT_STREAM_EVENT_NAMES = [
  'content',
  'reasoning',
  'refusal',
  'tool_call.start',
  'tool_call.delta',
  'tool_call.done',
  'usage',
  'finish',
  'chunk',
] as const satisfies readonly ChatStreamEvent['type'][];

/** Where the stream stands: `complete` once every choice has a finish_reason; `incomplete` after an early end or an error. */
export type ChatStreamStatus = 'streaming' | 'complete' | 'incomplete';

export interface ChatStreamListenerOptions {
  /** Move `<think>...</think>` text out of the content into the reasoning. Default true. */
  thinkTags?: boolean;
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
  /** Length of `arguments` when last checked for being complete JSON (so each state is parsed once). */
  checkedLength: number;
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
  last: ToolCallState | undefined;
  think: ThinkTagSplitter | undefined;

  constructor(readonly index: number) {}

  get toolCalls(): ChatCompletionMessageToolCall[] {
    return this.calls.map(toolCallOf);
  }
}

const syntheticId = (position: number) => `ai4ts_call_${position}`;

function toolCallOf(call: ToolCallState): ChatCompletionMessageToolCall {
  return {
    id: call.id || syntheticId(call.position),
    type: 'function',
    function: { name: call.name, arguments: call.arguments || '{}' },
  };
}

/** An id that names a call: empty strings and the string "null" (sent on continuations) do not. */
function realId(id: unknown): string | undefined {
  return typeof id === 'string' && id !== '' && id !== 'null' ? id : undefined;
}

function isCompleteJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * Merges Chat Completions chunks into a completion and emits normalized events.
 *
 * ```ts
 * const listener = new ChatStreamListener();
 * listener.on('content', (e) => process.stdout.write(e.delta));
 * for (const chunk of chunks) listener.push(chunk);
 * listener.end();
 * listener.completion; // { object: 'chat.completion', choices: [...], usage }
 * ```
 */
export class ChatStreamListener extends EventEmitter<ChatStreamEvents> {
  /** The last chunk pushed. */
  lastChunk: ChatCompletionChunk | undefined;
  /** The error that ended the stream, if any. */
  error: Ai4tsError | undefined;
  private readonly thinkTags: boolean;
  /** Choices by index; a Map, since a malformed index must not size an array. */
  private readonly states = new Map<number, ChoiceState>();
  private finishedCount = 0;
  private ended = false;
  private id = '';
  private model = '';
  private created = 0;
  private systemFingerprint: string | undefined;
  private currentUsage: Usage | undefined;

  constructor(options: ChatStreamListenerOptions = {}) {
    super();
    this.thinkTags = options.thinkTags ?? true;
  }

  /** Choice 0's text so far (without `<think>` text). */
  get content(): string {
    return this.states.get(0)?.content ?? '';
  }

  /** Choice 0's reasoning so far. */
  get reasoning(): string {
    return this.states.get(0)?.reasoning ?? '';
  }

  /** Choice 0's tool calls so far, arguments as streamed (`"{}"` while none). */
  get toolCalls(): ChatCompletionMessageToolCall[] {
    return this.states.get(0)?.toolCalls ?? [];
  }

  /** Choice 0's finish reason (`stop` reported as `tool_calls` when calls were streamed). */
  get finishReason(): FinishReason | null {
    return this.states.get(0)?.finishReason ?? null;
  }

  /** The usage reported so far. */
  get usage(): Usage | undefined {
    return this.currentUsage;
  }

  get status(): ChatStreamStatus {
    if (this.error) return 'incomplete';
    if (this.states.size > 0 && this.finishedCount === this.states.size) return 'complete';
    return this.ended ? 'incomplete' : 'streaming';
  }

  /** Every choice seen so far, by index (n > 1). */
  get choices(): ChatChoiceState[] {
    return this.present();
  }

  /** One choice's state, or undefined when it has not appeared. */
  choice(index: number): ChatChoiceState | undefined {
    return this.states.get(index);
  }

  /** The completion so far, in the shape of the final `chat.completion` (also the shape of `error.partial`). */
  get completion(): ChatCompletion {
    const states = this.present();
    const completion: ChatCompletion = {
      id: this.id,
      object: 'chat.completion',
      created: this.created,
      model: this.model,
      choices: (states.length ? states : [new ChoiceState(0)]).map(choiceOf),
    };
    if (this.systemFingerprint) completion.system_fingerprint = this.systemFingerprint;
    if (this.currentUsage) completion.usage = this.currentUsage;
    return completion;
  }

  /**
   * Merges one parsed chunk (a whole `chat.completion`, with `message` for `delta`, is read the same way).
   * An error object (`{"error": {...}}`) fails the stream: the ApiError, carrying the
   * partial completion, is emitted as `error` and thrown.
   */
  push(chunk: unknown): void {
    if (!isRecord(chunk)) {
      throw this.fail(new ProtocolError('A chat chunk must be a JSON object', { line: JSON.stringify(chunk) }));
    }
    if (chunk.error !== undefined && chunk.error !== null) throw this.fail(ApiError.fromStreamError(chunk, undefined));
    this.lastChunk = chunk as ChatCompletionChunk;
    if (this.id === '' && typeof chunk.id === 'string') this.id = chunk.id;
    if (this.model === '' && typeof chunk.model === 'string') this.model = chunk.model;
    if (this.created === 0 && typeof chunk.created === 'number') this.created = chunk.created;
    if (typeof chunk.system_fingerprint === 'string') this.systemFingerprint = chunk.system_fingerprint;
    const choices = chunk.choices;
    if (Array.isArray(choices)) {
      for (const choice of choices) if (isRecord(choice)) this.mergeChoice(choice);
    }
    if (isRecord(chunk.usage)) this.setUsage(chunk.usage);
    if (this.has('chunk')) this.emit('chunk', { type: 'chunk', chunk: chunk as ChatCompletionChunk });
  }

  /**
   * Marks the end of input. Text held back as a possible `<think>` tag is released; when every choice finished,
   * calls still open are done. After an early end, `status` is `incomplete` and open calls never get `tool_call.done`.
   */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    for (const state of this.states.values()) this.flushThink(state);
    if (this.status === 'complete') for (const state of this.states.values()) this.closeCalls(state);
  }

  /**
   * Ends the stream with an error: sets `error.partial` to the completion so far (unless set), emits `error`,
   * and returns the error for the caller to throw.
   */
  fail<E extends Ai4tsError>(error: E): E {
    for (const state of this.states.values()) this.flushThink(state);
    if (error.partial === undefined) error.partial = this.completion;
    this.error ??= error;
    this.ended = true;
    this.emit('error', { type: 'error', error });
    return error;
  }

  /** The choices that appeared, in index order. */
  private present(): ChoiceState[] {
    return [...this.states.values()].sort((a, b) => a.index - b.index);
  }

  private has(event: keyof ChatStreamEvents): boolean {
    return this.listenerCount(event) > 0;
  }

  private stateOf(index: number): ChoiceState {
    let state = this.states.get(index);
    if (!state) {
      state = new ChoiceState(index);
      this.states.set(index, state);
    }
    return state;
  }

  private mergeChoice(choice: Record<string, unknown>): void {
    const state = this.stateOf(typeof choice.index === 'number' ? choice.index : 0);
    // A whole `chat.completion` (a server that ignored `stream: true`) carries `message` where chunks carry `delta`.
    const delta = choice.delta === undefined ? choice.message : choice.delta;
    if (isRecord(delta)) {
      const content = delta.content;
      if (typeof content === 'string') {
        if (content !== '') this.addContent(state, content);
      } else if (Array.isArray(content)) this.addContentParts(state, content);
      const reasoning = nonEmpty(delta.reasoning_content) ?? nonEmpty(delta.reasoning);
      if (reasoning !== undefined) this.appendReasoning(state, reasoning);
      const refusal = nonEmpty(delta.refusal);
      if (refusal !== undefined) this.appendRefusal(state, refusal);
      const toolCalls = delta.tool_calls;
      if (Array.isArray(toolCalls)) {
        for (const fragment of toolCalls) if (isRecord(fragment)) this.mergeToolCall(state, fragment);
      }
    }
    if (isRecord(choice.logprobs)) appendLogprobs(state, choice.logprobs);
    const finishReason = nonEmpty(choice.finish_reason);
    if (finishReason !== undefined) this.finish(state, finishReason);
    if (isRecord(choice.usage)) this.setUsage(choice.usage);
  }

  private addContent(state: ChoiceState, text: string): void {
    if (!this.thinkTags) {
      this.appendContent(state, text);
      return;
    }
    state.think ??= new ThinkTagSplitter();
    const think = state.think;
    if (think.idle && text.indexOf('<') === -1) {
      if (think.reasoning) this.appendReasoning(state, text);
      else this.appendContent(state, text);
    } else {
      think.push(text, (piece, isReasoning) =>
        isReasoning ? this.appendReasoning(state, piece) : this.appendContent(state, piece),
      );
    }
  }

  /** Mistral's content parts: `{type:'text', text}` and `{type:'thinking', thinking: [{type:'text', text}] | string}`. */
  private addContentParts(state: ChoiceState, parts: unknown[]): void {
    for (const part of parts) {
      if (!isRecord(part)) continue;
      if (part.type === 'text' && typeof part.text === 'string' && part.text !== '') this.addContent(state, part.text);
      else if (part.type === 'thinking') {
        const thinking = part.thinking;
        if (typeof thinking === 'string' && thinking !== '') this.appendReasoning(state, thinking);
        else if (Array.isArray(thinking)) {
          for (const inner of thinking) {
            if (isRecord(inner) && typeof inner.text === 'string' && inner.text !== '') this.appendReasoning(state, inner.text);
          }
        }
      }
    }
  }

  private appendContent(state: ChoiceState, delta: string): void {
    state.content += delta;
    if (this.has('content')) {
      this.emit('content', { type: 'content', delta, snapshot: state.content, choice: state.index });
    }
  }

  private appendReasoning(state: ChoiceState, delta: string): void {
    state.reasoning += delta;
    if (this.has('reasoning')) {
      this.emit('reasoning', { type: 'reasoning', delta, snapshot: state.reasoning, choice: state.index });
    }
  }

  private appendRefusal(state: ChoiceState, delta: string): void {
    state.refusal = (state.refusal ?? '') + delta;
    if (this.has('refusal')) {
      this.emit('refusal', { type: 'refusal', delta, snapshot: state.refusal, choice: state.index });
    }
  }

  private flushThink(state: ChoiceState): void {
    state.think?.flush((piece, isReasoning) =>
      isReasoning ? this.appendReasoning(state, piece) : this.appendContent(state, piece),
    );
  }

  /** Finds the call a fragment belongs to (see the precise rules in docs/chat.md) and appends to it. */
  private mergeToolCall(state: ChoiceState, fragment: Record<string, unknown>): void {
    const id = realId(fragment.id);
    const fn = isRecord(fragment.function) ? fragment.function : undefined;
    let call: ToolCallState | undefined;
    if (typeof fragment.index === 'number') {
      call = state.byIndex.get(fragment.index);
      // A different id at a known index is a new call reusing the index.
      if (call && id !== undefined && call.hasProviderId && state.byId.get(id) !== call) call = undefined;
      if (!call) {
        call = (id !== undefined && state.byId.get(id)) || this.openCall(state);
        state.byIndex.set(fragment.index, call);
      }
    } else {
      call = id !== undefined ? state.byId.get(id) : state.last;
      call ??= this.openCall(state);
    }
    if (id !== undefined && !call.hasProviderId) {
      call.hasProviderId = true;
      state.byId.set(id, call);
      if (!call.started) call.id = id;
    }
    if (fn) {
      if (call.name === '') call.name = nonEmpty(fn.name) ?? '';
      const args = fn.arguments;
      const delta = typeof args === 'string' ? args : isRecord(args) ? JSON.stringify(args) : '';
      if (delta !== '') {
        call.arguments += delta;
        if (call.started && !call.done && this.has('tool_call.delta')) {
          this.emit('tool_call.delta', { type: 'tool_call.delta', index: call.position, id: call.id, delta, choice: state.index });
        }
      }
    }
    if (!call.started && call.name !== '') this.startCall(state, call);
  }

  /** A new call: earlier calls whose arguments already form complete JSON are done. */
  private openCall(state: ChoiceState): ToolCallState {
    for (const earlier of state.calls) {
      if (earlier.done || earlier.arguments.length === earlier.checkedLength) continue;
      earlier.checkedLength = earlier.arguments.length;
      if (isCompleteJson(earlier.arguments)) this.doneCall(state, earlier);
    }
    const call: ToolCallState = {
      position: state.calls.length,
      id: '',
      hasProviderId: false,
      name: '',
      arguments: '',
      started: false,
      done: false,
      checkedLength: 0,
    };
    state.calls.push(call);
    state.last = call;
    return call;
  }

  private startCall(state: ChoiceState, call: ToolCallState): void {
    call.started = true;
    call.id ||= syntheticId(call.position);
    const choice = state.index;
    this.emit('tool_call.start', { type: 'tool_call.start', index: call.position, id: call.id, name: call.name, choice });
    // Arguments that came before the name are one delta.
    if (call.arguments !== '' && this.has('tool_call.delta')) {
      this.emit('tool_call.delta', {
        type: 'tool_call.delta',
        index: call.position,
        id: call.id,
        delta: call.arguments,
        choice,
      });
    }
  }

  private doneCall(state: ChoiceState, call: ToolCallState): void {
    if (!call.started) this.startCall(state, call);
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
  private closeCalls(state: ChoiceState): void {
    if (state.finishReason === 'length' || state.finishReason === 'content_filter') return;
    for (const call of state.calls) if (!call.done) this.doneCall(state, call);
  }

  private finish(state: ChoiceState, reason: string): void {
    if (state.finishReason !== null) return; // some providers repeat it on the usage chunk
    this.flushThink(state);
    state.finishReason = reason === 'stop' && state.calls.length > 0 ? 'tool_calls' : reason;
    this.finishedCount++;
    this.closeCalls(state);
    this.emit('finish', { type: 'finish', finishReason: state.finishReason, choice: state.index });
  }

  private setUsage(raw: Record<string, unknown>): void {
    const usage = normalizeUsage(raw);
    const prev = this.currentUsage;
    if (
      prev &&
      prev.prompt_tokens === usage.prompt_tokens &&
      prev.completion_tokens === usage.completion_tokens &&
      prev.total_tokens === usage.total_tokens
    ) {
      return;
    }
    this.currentUsage = usage;
    this.emit('usage', { type: 'usage', usage, raw });
  }
}

function nonEmpty(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function num(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

/** Usage in OpenAI's shape; `input_tokens`/`output_tokens` (some gateways) are read too. */
function normalizeUsage(raw: Record<string, unknown>): Usage {
  const prompt = num(raw.prompt_tokens) ?? num(raw.input_tokens) ?? 0;
  const completion = num(raw.completion_tokens) ?? num(raw.output_tokens) ?? 0;
  return {
    ...raw,
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: num(raw.total_tokens) ?? prompt + completion,
  };
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
  const message: ChatCompletionMessage = { role: 'assistant', content: state.content === '' ? null : state.content };
  if (state.reasoning !== '') message.reasoning_content = state.reasoning;
  if (state.refusal !== null) message.refusal = state.refusal;
  if (state.calls.length > 0) message.tool_calls = state.toolCalls;
  const choice: ChatCompletionChoice = { index: state.index, message, finish_reason: state.finishReason };
  if (state.logprobs) choice.logprobs = state.logprobs;
  return choice;
}
