/**
 * Folds the chunks of one Gemini `streamGenerateContent` stream into a `GenerateContentResponse`, and emits ai4ts's
 * normalized stream events.
 */
import { ApiError, type NormalizedEvents, ProtocolError, ProtocolListener, type RetryEvents, StreamIncompleteError } from '@ai4ts/core';
import { isRecord, setOwn } from '@ai4ts/core/internal';
import type { SseEvent } from '@ai4ts/sse';
import { toChatUsage, toFinishReason } from './convert.js';
import { PromptBlockedError } from './errors.js';
import { ArgsBuilder } from './partial-args.js';
import { toolCallId } from './turns.js';
import {
  type Candidate,
  type FunctionCallPart,
  type GenerateContentResponse,
  isFunctionCallPart,
  isTextPart,
  type Part,
  type StreamedFunctionCall,
  type TextPart,
  type UsageMetadata,
} from './types.js';

/**
 * What a {@link GeminiStreamListener} emits: the normalized events (`content`, `reasoning` for thought parts,
 * `tool_call.*` for function calls, `usage` at each chunk that has it, `finish` per candidate, `error`), the raw
 * `chunk` after it was applied, and the handle's `retry`.
 */
export type GeminiStreamEvents = Omit<NormalizedEvents, 'tool.result'> &
  RetryEvents & {
    /** Every applied chunk. */
    chunk: (chunk: GenerateContentResponse) => void;
  };

/** Options of a {@link GeminiStreamListener}. */
export interface GeminiStreamListenerOptions {
  /** Keep every applied chunk in {@link GeminiStreamListener.chunks}. Default true; `collectGemini`'s keeps none. */
  trace?: boolean;
}

/** A function call whose arguments still stream (Vertex AI's `partialArgs`). */
interface OpenCall {
  part: FunctionCallPart;
  args: ArgsBuilder;
  toolIndex: number;
}

/** One candidate being built. */
interface CandidateState {
  /** The live candidate of the response, its `content.parts` the live array. */
  readonly candidate: Candidate & { content: { role?: string; parts: Part[] } };
  open: OpenCall | undefined;
  toolCount: number;
  /** `finish` went out (once, however many chunks repeat the reason). */
  finished: boolean;
  textSoFar: string;
  thoughtSoFar: string;
}

/** What a {@link GeminiStreamListener} knows of one stream; a new one for each attempt (see `reset`). */
interface GeminiState {
  readonly chunks: GenerateContentResponse[];
  /** The response being built; null before the first chunk. */
  response: GenerateContentResponse | null;
  /** The candidates by index (`index`, 0 when absent). */
  readonly candidates: Map<number, CandidateState>;
}

function initialGeminiState(): GeminiState {
  return { chunks: [], response: null, candidates: new Map() };
}

const NO_FINISH_REASON = 'The stream ended before a finishReason';

/**
 * The Gemini stream state machine, following core's `StreamListener` contract. Feed it each SSE event with
 * {@link pushSse} (or each parsed chunk with {@link push}); it keeps {@link response}, {@link text},
 * {@link thoughts}, {@link functionCalls}, {@link usage}, {@link status} and {@link chunks}.
 *
 * - Parts fold in arrival order: a text part continues the last part when both are text of the same kind (thought
 *   or answer) and the last one has no `thoughtSignature` yet (a signature ends a part); a signature that comes on
 *   a continuing chunk (often an empty text) stays on the part it continues. Function-call, code, inline-data and
 *   unknown parts are kept as sent, each its own part.
 * - A function call is complete when it arrives with its `args`; a Vertex AI call streamed as `partialArgs`
 *   (`willContinue: true`) is merged until its last fragment, and kept as one `functionCall` with `name` and `args`.
 *   Calls without an `id` get a stable one (`toolCallId`); an `id` the API sent is kept.
 * - `usageMetadata`, `modelVersion`, `responseId` and `promptFeedback` take the latest chunk's; a candidate's
 *   `finishReason`, `safetyRatings`, `groundingMetadata` and other fields too, citation lists are appended.
 * - Gemini has no terminal event: the stream is complete when it ends with a finishReason on every candidate;
 *   without one it is a StreamIncompleteError. `promptFeedback.blockReason` is a PromptBlockedError, an
 *   `{ error }` chunk an ApiError, data that is not a JSON object a ProtocolError; each is recorded and thrown.
 * - Every error's `partial` is {@link snapshot}: a copy of the response so far, none before the first chunk.
 */
export class GeminiStreamListener extends ProtocolListener<GeminiState, GenerateContentResponse, GeminiStreamEvents> {
  readonly #trace: boolean;

  constructor(options: GeminiStreamListenerOptions = {}) {
    super(initialGeminiState);
    this.#trace = options.trace ?? true;
  }

  /** Every applied chunk, in arrival order (none for a listener created with `trace: false`). */
  get chunks(): GenerateContentResponse[] {
    return this.state.chunks;
  }

  /** The response being built (the live object), null before the first chunk. */
  get response(): GenerateContentResponse | null {
    return this.state.response;
  }

  /** The first candidate's answer text (its non-thought text parts joined). */
  get text(): string {
    return joinText(this.state.candidates.get(0)?.candidate.content.parts ?? [], false);
  }

  /** The first candidate's thoughts joined. */
  get thoughts(): string {
    return joinText(this.state.candidates.get(0)?.candidate.content.parts ?? [], true);
  }

  /** The first candidate's function-call parts, in order. */
  get functionCalls(): FunctionCallPart[] {
    return (this.state.candidates.get(0)?.candidate.content.parts ?? []).filter(isFunctionCallPart);
  }

  /** The latest usage. */
  get usage(): UsageMetadata | null {
    return this.state.response?.usageMetadata ?? null;
  }

  /**
   * Applies one chunk. Ignored once the stream completed or failed.
   *
   * @throws ApiError for an `{ error }` chunk, PromptBlockedError for a blocked prompt, ProtocolError for a chunk
   *   that is not a response; recorded first.
   */
  push(chunk: GenerateContentResponse): void {
    if (this.hasEnded()) return;
    const state = this.state;
    if (this.#trace) state.chunks.push(chunk);
    if (isRecord(chunk.error)) throw this.fail(streamError(chunk.error, chunk));
    if (chunk.candidates !== undefined && !Array.isArray(chunk.candidates)) {
      throw this.fail(new ProtocolError('candidates is not an array', { line: JSON.stringify(chunk) }));
    }
    const response = this.#current(chunk);
    this.markStreaming();
    const blocked = chunk.promptFeedback?.blockReason;
    if (blocked !== undefined && blocked !== 'BLOCK_REASON_UNSPECIFIED') {
      const detail = chunk.promptFeedback?.blockReasonMessage;
      throw this.fail(
        new PromptBlockedError(`Gemini blocked the prompt: ${blocked}${detail ? ` (${detail})` : ''}`, blocked, {
          code: blocked,
          type: 'prompt_blocked',
          body: chunk,
        }),
      );
    }
    for (const candidate of chunk.candidates ?? []) {
      if (!isRecord(candidate)) throw this.fail(new ProtocolError('A candidate is not an object', { line: JSON.stringify(chunk) }));
      this.#candidate(candidate);
    }
    if (chunk.usageMetadata) {
      response.usageMetadata = { ...chunk.usageMetadata };
      this.emit('usage', { type: 'usage', usage: toChatUsage(chunk.usageMetadata), raw: chunk.usageMetadata });
    }
    for (const state of this.state.candidates.values()) this.#finishIfDone(state, chunk);
    this.emit('chunk', chunk);
  }

  /**
   * Applies one SSE event: its `data` parsed as JSON. An event with empty data is skipped.
   *
   * @throws ProtocolError (with the data in `line`) for data that is not a JSON object, and whatever {@link push}
   *   throws; recorded first.
   */
  override pushSse(sse: SseEvent): void {
    if (this.hasEnded() || sse.data === '') return;
    let data: unknown;
    try {
      data = JSON.parse(sse.data);
    } catch (cause) {
      throw this.fail(new ProtocolError('Stream data is not valid JSON', { line: sse.data, cause }));
    }
    if (!isRecord(data)) throw this.fail(new ProtocolError('Stream data is not a JSON object', { line: sse.data }));
    this.push(data);
  }

  /** {@link snapshot}: none before the first chunk. */
  protected override partial(): GenerateContentResponse | undefined {
    return this.snapshot() ?? undefined;
  }

  protected override result(): GenerateContentResponse {
    const response = this.state.response;
    if (!response) throw new StreamIncompleteError(NO_FINISH_REASON);
    return response;
  }

  /** Complete when every candidate has its finishReason (and no call is left open); incomplete otherwise. */
  protected override endedEarly(): StreamIncompleteError | undefined {
    const { candidates, response } = this.state;
    if (!response || candidates.size === 0) return new StreamIncompleteError(NO_FINISH_REASON);
    for (const state of candidates.values()) {
      if (state.candidate.finishReason === undefined) return new StreamIncompleteError(NO_FINISH_REASON);
      if (state.open) return new StreamIncompleteError('The stream ended inside a streamed function call');
    }
    return undefined;
  }

  /**
   * A copy of the response so far, for an error's `partial`: candidates and parts copied; a function call still
   * streaming holds its arguments so far, with `willContinue: true`. Null before the first chunk.
   */
  snapshot(): GenerateContentResponse | null {
    const response = this.state.response;
    if (!response) return null;
    const candidates = [...this.state.candidates.values()].map(({ candidate, open }) => ({
      ...candidate,
      content: {
        ...candidate.content,
        parts: candidate.content.parts.map((part) =>
          part === open?.part
            ? { ...part, functionCall: { ...part.functionCall, args: open.args.value(), willContinue: true } }
            : { ...part },
        ),
      },
    }));
    return { ...response, candidates };
  }

  #current(chunk: GenerateContentResponse): GenerateContentResponse {
    const state = this.state;
    state.response ??= { candidates: [] };
    const response = state.response;
    for (const [key, value] of Object.entries(chunk)) {
      if (key !== 'candidates' && key !== 'usageMetadata' && value !== undefined) setOwn(response, key, value);
    }
    return response;
  }

  #candidate(incoming: Candidate): void {
    const index = typeof incoming.index === 'number' ? incoming.index : 0;
    let state = this.state.candidates.get(index);
    if (!state) {
      const candidate: CandidateState['candidate'] = { content: { role: 'model', parts: [] }, index };
      state = { candidate, open: undefined, toolCount: 0, finished: false, textSoFar: '', thoughtSoFar: '' };
      this.state.candidates.set(index, state);
      const list = (this.state.response as GenerateContentResponse).candidates as Candidate[];
      list.push(candidate);
      list.sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
    }
    const { candidate } = state;
    for (const [key, value] of Object.entries(incoming)) {
      if (key === 'content' || key === 'index' || value === undefined) continue;
      if (key === 'citationMetadata' && isRecord(value)) candidate.citationMetadata = mergeCitations(candidate.citationMetadata, value);
      else setOwn(candidate, key, value);
    }
    const content = incoming.content;
    if (!content) return;
    if (typeof content.role === 'string') candidate.content.role = content.role;
    if (!Array.isArray(content.parts)) return;
    for (const part of content.parts) {
      if (!isRecord(part)) throw this.fail(new ProtocolError('A part is not an object', { line: JSON.stringify(incoming) }));
      this.#part(state, part);
    }
  }

  #part(state: CandidateState, part: Part): void {
    if (isFunctionCallPart(part)) {
      this.#functionCall(state, part);
      return;
    }
    this.#closeCall(state);
    const parts = state.candidate.content.parts;
    if (isTextPart(part)) {
      const last = parts[parts.length - 1];
      const thought = part.thought === true;
      if (last && continues(last, part)) {
        last.text += part.text;
        if (part.thoughtSignature !== undefined) last.thoughtSignature = part.thoughtSignature;
      } else parts.push({ ...part });
      if (part.text !== '') this.#emitText(state, part.text, thought);
      return;
    }
    parts.push({ ...part });
  }

  #functionCall(state: CandidateState, part: FunctionCallPart): void {
    const call: StreamedFunctionCall = part.functionCall;
    const open = state.open;
    // A fragment without a name continues the open call (Vertex AI's streamed arguments).
    if (open && call.name === undefined) {
      if (part.thoughtSignature !== undefined) open.part.thoughtSignature = part.thoughtSignature;
      if (Array.isArray(call.partialArgs)) this.#applyArgs(open, call);
      if (call.willContinue !== true) this.#closeCall(state);
      return;
    }
    this.#closeCall(state);
    if (call.name === undefined) {
      throw this.fail(new ProtocolError('A functionCall without a name, and no call is open', { line: JSON.stringify(part) }));
    }
    const { partialArgs, willContinue, ...complete } = call;
    const stored: FunctionCallPart = { ...part, functionCall: complete };
    state.candidate.content.parts.push(stored);
    const toolIndex = state.toolCount++;
    const id = toolCallId(this.state.response?.responseId, state.candidate.index ?? 0, toolIndex, complete);
    const choice = state.candidate.index ?? 0;
    this.emit('tool_call.start', { type: 'tool_call.start', index: toolIndex, id, name: call.name, choice });
    if (willContinue === true || Array.isArray(partialArgs)) {
      const opened: OpenCall = { part: stored, args: new ArgsBuilder(complete.args), toolIndex };
      state.open = opened;
      if (Array.isArray(partialArgs)) this.#applyArgs(opened, call);
      if (willContinue !== true) this.#closeCall(state);
      return;
    }
    const args = JSON.stringify(complete.args ?? {});
    this.emit('tool_call.delta', { type: 'tool_call.delta', index: toolIndex, id, delta: args, choice });
    this.emit('tool_call.done', { type: 'tool_call.done', index: toolIndex, id, name: call.name, arguments: args, choice });
  }

  #applyArgs(open: OpenCall, call: StreamedFunctionCall): void {
    try {
      for (const arg of call.partialArgs ?? []) open.args.apply(arg);
    } catch (error) {
      throw this.fail(
        new ProtocolError(`Bad partialArgs: ${error instanceof Error ? error.message : String(error)}`, {
          line: JSON.stringify(call),
        }),
      );
    }
  }

  /** The open streamed call is complete: its merged arguments become `args`, and its `tool_call.done` goes out. */
  #closeCall(state: CandidateState): void {
    const open = state.open;
    if (!open) return;
    state.open = undefined;
    const call = open.part.functionCall;
    call.args = open.args.value();
    const id = toolCallId(this.state.response?.responseId, state.candidate.index ?? 0, open.toolIndex, call);
    const args = JSON.stringify(call.args);
    const choice = state.candidate.index ?? 0;
    this.emit('tool_call.delta', { type: 'tool_call.delta', index: open.toolIndex, id, delta: args, choice });
    this.emit('tool_call.done', {
      type: 'tool_call.done',
      index: open.toolIndex,
      id,
      name: call.name ?? '',
      arguments: args,
      choice,
    });
  }

  /** A candidate whose finishReason arrived in `chunk`: its open call closes and `finish` goes out. */
  #finishIfDone(state: CandidateState, chunk: GenerateContentResponse): void {
    const { candidate } = state;
    const index = candidate.index ?? 0;
    const arrived = chunk.candidates?.some((c) => (c.index ?? 0) === index && c.finishReason !== undefined);
    if (!arrived || candidate.finishReason === undefined || state.finished) return;
    state.finished = true;
    this.#closeCall(state);
    const calls = state.toolCount > 0;
    this.emit('finish', { type: 'finish', finishReason: toFinishReason(candidate.finishReason, calls), choice: index });
  }

  #emitText(state: CandidateState, delta: string, thought: boolean): void {
    const choice = state.candidate.index ?? 0;
    if (thought) {
      state.thoughtSoFar += delta;
      if (this.hears('reasoning')) this.emit('reasoning', { type: 'reasoning', delta, snapshot: state.thoughtSoFar, choice });
    } else {
      state.textSoFar += delta;
      if (this.hears('content')) this.emit('content', { type: 'content', delta, snapshot: state.textSoFar, choice });
    }
  }
}

/** Whether text part `next` continues `last`: both text of the same kind, `last` not ended by a signature. */
function continues(last: Part, next: TextPart): last is TextPart {
  if (!isTextPart(last) || last.thoughtSignature !== undefined) return false;
  if ((last.thought === true) !== (next.thought === true)) return false;
  // A part with any other field (a video's metadata, ...) is its own part.
  for (const key of Object.keys(next)) if (key !== 'text' && key !== 'thought' && key !== 'thoughtSignature') return false;
  return true;
}

function joinText(parts: readonly Part[], thought: boolean): string {
  let out = '';
  for (const part of parts) if (isTextPart(part) && (part.thought === true) === thought) out += part.text;
  return out;
}

/** Citation lists grow chunk by chunk: append each list, take the latest of any other field. */
function mergeCitations(
  current: Record<string, unknown> | undefined,
  incoming: Record<string, unknown>,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...current };
  for (const [key, value] of Object.entries(incoming)) {
    const before = out[key];
    setOwn(out, key, Array.isArray(value) && Array.isArray(before) ? [...before, ...value] : value);
  }
  return out;
}

/**
 * `{ error: { code, message, status } }` in a stream that began with HTTP 200: no HTTP `status` (the answer's was 200;
 * the numeric `code` is in `body`), `code` the Google status (`UNAVAILABLE`), or the number when there is none.
 */
function streamError(error: Record<string, unknown>, body: unknown): ApiError {
  const message = typeof error.message === 'string' ? error.message : 'The stream reported an error';
  const status = typeof error.status === 'string' ? error.status : undefined;
  const code = typeof error.code === 'number' ? String(error.code) : undefined;
  return new ApiError(message, { code: status ?? code, type: status, body });
}
