/**
 * Folds bridge events into one OpenAI-shaped `chat.completion`: the non-stream writer's result, the streaming
 * writer's state, and the `partial` every reader error carries.
 */
import type { FinishReason, Usage } from '@ai4ts/core';
import { assertNever } from '@ai4ts/core/internal';
import type { BridgeEvent } from './events.js';

/**
 * Who ran the tool calls in an event stream.
 * - `'daemon'`: the daemon ran them itself. They are reported, with their results, under the vendor field
 *   `daemon_tools`, never as `tool_calls`, and finish_reason is never `tool_calls` for them.
 * - `'client'`: they are OpenAI tool calls for the client to run (`tool_calls`, finish_reason `tool_calls`).
 */
export type ToolCallOwner = 'daemon' | 'client';

/** A tool the daemon ran itself, with its result once known: the `daemon_tools` vendor field. */
export interface DaemonTool {
  id: string;
  name: string;
  /** The argument string as the daemon reported it. */
  arguments: string;
  output?: unknown;
  is_error?: boolean;
  duration_ms?: number;
}

/** An OpenAI tool call for the client to run. */
export interface BridgeToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** The assistant message of a bridge completion. */
export interface BridgeMessage {
  role: 'assistant';
  /** The concatenated text, or null when none arrived. */
  content: string | null;
  /** Present only when reasoning arrived; rounds are joined with nothing between. */
  reasoning_content?: string;
  tool_calls?: BridgeToolCall[];
  /** Vendor field: the tools the daemon ran itself (see {@link ToolCallOwner}). */
  daemon_tools?: DaemonTool[];
}

/** An OpenAI `chat.completion`, plus the daemon's `session_id` when known. */
export interface BridgeCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  /** The daemon's session id (vendor field). */
  session_id?: string;
  choices: [{ index: 0; message: BridgeMessage; finish_reason: FinishReason | null; logprobs: null }];
  usage?: Usage;
}

/** Options shared by the writers that produce OpenAI shapes. */
export interface CompletionOptions {
  /** The completion id; `chatcmpl-<uuid>` by default. */
  id?: string;
  /** The model name to report; `'daemon'` by default. */
  model?: string;
  /** Unix seconds; now by default. */
  created?: number;
  /** The session id to report when the daemon names none (the one the request carried). */
  sessionId?: string;
  /** Who ran the tool calls; `'daemon'` by default, since a dialect's daemon runs its own tools. */
  toolCalls?: ToolCallOwner;
}

/** Accumulates bridge events; {@link CompletionBuilder.completion} reads the result at any moment. */
export class CompletionBuilder {
  readonly id: string;
  readonly model: string;
  readonly created: number;
  readonly toolCalls: ToolCallOwner;
  content = '';
  reasoning = '';
  usage: Usage | undefined;
  finishReason: FinishReason | undefined;
  sessionId: string | undefined;
  messageId: string | undefined;
  /** Tool calls by id, in arrival order. */
  readonly tools = new Map<string, DaemonTool>();
  /** Some content arrived (even empty): `content` is then a string, not null. */
  #hasContent = false;
  /** A `usage` event arrived: the summed rounds win over the total on `done`. */
  #summedUsage = false;

  constructor(options: CompletionOptions = {}) {
    this.id = options.id ?? `chatcmpl-${crypto.randomUUID()}`;
    this.model = options.model ?? 'daemon';
    this.created = options.created ?? Math.floor(Date.now() / 1000);
    this.toolCalls = options.toolCalls ?? 'daemon';
    this.sessionId = options.sessionId;
  }

  /** Folds one event in. */
  add(event: BridgeEvent): void {
    switch (event.type) {
      case 'content':
        this.content += event.delta;
        this.#hasContent = true;
        break;
      case 'reasoning':
        this.reasoning += event.delta;
        break;
      case 'tool_call.start':
        this.tools.set(event.id, { id: event.id, name: event.name, arguments: '' });
        break;
      case 'tool_call.delta': {
        const tool = this.tools.get(event.id);
        if (tool) tool.arguments += event.delta;
        break;
      }
      case 'tool_call.done':
        this.tools.set(event.id, {
          ...this.tools.get(event.id),
          id: event.id,
          name: event.name,
          arguments: event.arguments,
        });
        break;
      case 'tool.result': {
        if (this.toolCalls === 'client') break; // the client ran it: its call is already in tool_calls
        const tool = this.tools.get(event.id) ?? { id: event.id, name: event.name, arguments: '{}' };
        tool.output = event.output;
        tool.is_error = event.isError;
        if (event.durationMs !== undefined) tool.duration_ms = event.durationMs;
        this.tools.set(event.id, tool);
        break;
      }
      case 'usage':
        this.usage = event.usage;
        this.#summedUsage = true;
        break;
      case 'finish':
        this.finishReason = event.finishReason;
        break;
      case 'start':
      case 'done':
        this.sessionId = event.sessionId ?? this.sessionId;
        this.messageId = event.messageId ?? this.messageId;
        if (event.type === 'done' && !this.#summedUsage && event.usage) this.usage = event.usage;
        break;
      // No field of a completion holds these; a reader throws an `error` event's error itself.
      case 'tool.progress':
      case 'reasoning.signature':
      case 'unknown':
      case 'error':
        break;
      default:
        assertNever(event);
    }
  }

  /** The finish_reason the answer ends with, once it is complete. */
  get finalReason(): FinishReason {
    if (this.toolCalls === 'client') return this.tools.size > 0 ? 'tool_calls' : (this.finishReason ?? 'stop');
    return this.finishReason === undefined || this.finishReason === 'tool_calls' ? 'stop' : this.finishReason;
  }

  /** The completion so far: `complete` sets the final finish_reason, otherwise it is null (a partial). */
  completion(complete = false): BridgeCompletion {
    const message: BridgeMessage = { role: 'assistant', content: this.#hasContent ? this.content : null };
    if (this.reasoning) message.reasoning_content = this.reasoning;
    if (this.tools.size > 0) {
      const tools = [...this.tools.values()];
      if (this.toolCalls === 'daemon') message.daemon_tools = tools;
      else
        message.tool_calls = tools.map((t) => ({
          id: t.id,
          type: 'function',
          function: { name: t.name, arguments: t.arguments || '{}' },
        }));
    }
    const result: BridgeCompletion = {
      id: this.id,
      object: 'chat.completion',
      created: this.created,
      model: this.model,
      choices: [{ index: 0, message, finish_reason: complete ? this.finalReason : null, logprobs: null }],
    };
    if (this.sessionId !== undefined) result.session_id = this.sessionId;
    if (this.usage) result.usage = this.usage;
    return result;
  }
}
