/**
 * The front door: one client per provider, with Chat Completions (tool loop included), Responses and Messages.
 */
import {
  type ChatCompletion,
  type ChatCompletionRequest,
  type ChatRequestOptions,
  ChatService,
  type ChatStream,
  type ChatToolLoopOptions,
  type ChatToolLoopResult,
  type ChatToolLoopStream,
  runChatToolLoop,
  streamChatToolLoop,
} from '@ai4ts/chat';
import { isTool, type Tool, type ToolLoopOptions, Transport, type TransportOptions } from '@ai4ts/core';
import { MessagesService } from '@ai4ts/messages';
import { ResponsesService } from '@ai4ts/responses';

/** Options of {@link Ai4ts}: the provider preset, baseURL, apiKey, retries and timeouts of its Transport. */
export type Ai4tsOptions = TransportOptions;

/** The loop's settings a chat request may carry; never sent to the API. */
export type ChatLoopFields = Pick<
  ToolLoopOptions<ChatCompletionRequest, ChatCompletion>,
  'maxSteps' | 'passThroughToolCalls' | 'onStepFinish' | 'onToolCall' | 'prepareStep'
>;

/** A chat request that runs the tool loop: tools made by `defineTool`, or loop settings. */
export type ChatLoopRequest = Omit<ChatCompletionRequest, 'tools'> &
  ChatLoopFields &
  ({ tools: readonly Tool[] } | { maxSteps: number } | { passThroughToolCalls: boolean });

/** Whether a request runs the tool loop: it has `defineTool` tools, `maxSteps` or `passThroughToolCalls`. */
export function isLoopRequest(request: ChatCompletionRequest): boolean {
  return (
    request.tools?.some(isTool) === true || request.maxSteps !== undefined || request.passThroughToolCalls !== undefined
  );
}

/**
 * Chat Completions with the tool loop built in. A request with `defineTool` tools (or `maxSteps` /
 * `passThroughToolCalls`) runs the loop; any other request is one plain call, as {@link ChatService} makes it.
 */
export class ChatClient {
  /** The plain service, for single requests. */
  readonly service: ChatService;

  constructor(readonly transport: Transport) {
    this.service = new ChatService(transport);
  }

  /** Runs the tool loop to its end and resolves to its result (`text`, `messages`, `steps`, `usage`). */
  create(request: ChatLoopRequest, options?: ChatToolLoopOptions): Promise<ChatToolLoopResult>;
  /** One non-streaming request. */
  create(request: ChatCompletionRequest, options?: ChatRequestOptions): Promise<ChatCompletion>;
  create(
    input: ChatCompletionRequest | ChatLoopRequest,
    options?: ChatToolLoopOptions | ChatRequestOptions,
  ): Promise<ChatToolLoopResult | ChatCompletion> {
    const request = input as ChatCompletionRequest;
    return isLoopRequest(request)
      ? runChatToolLoop(this.transport, request, options as ChatToolLoopOptions)
      : this.service.create(request, options as ChatRequestOptions);
  }

  /** Starts the tool loop as one step-tagged event stream; `.final()` resolves to the loop's result. */
  stream(request: ChatLoopRequest, options?: ChatToolLoopOptions): ChatToolLoopStream;
  /** One streaming request. */
  stream(request: ChatCompletionRequest, options?: ChatRequestOptions): ChatStream;
  stream(
    input: ChatCompletionRequest | ChatLoopRequest,
    options?: ChatToolLoopOptions | ChatRequestOptions,
  ): ChatToolLoopStream | ChatStream {
    const request = input as ChatCompletionRequest;
    return isLoopRequest(request)
      ? streamChatToolLoop(this.transport, request, options as ChatToolLoopOptions)
      : this.service.stream(request, options as ChatRequestOptions);
  }
}

/**
 * An ai4ts client for one provider.
 *
 * @example
 * const client = new Ai4ts({ provider: 'deepseek' });
 * const result = await client.chat.create({ model, messages, tools: [getWeather] });
 * console.log(result.text);
 */
export class Ai4ts {
  /** The transport every service shares. */
  readonly transport: Transport;
  /** Chat Completions, with the tool loop. */
  readonly chat: ChatClient;
  /** OpenAI Responses. */
  readonly responses: ResponsesService;
  /** Anthropic Messages. */
  readonly messages: MessagesService;

  constructor(options: Ai4tsOptions = {}) {
    this.transport = new Transport(options);
    this.chat = new ChatClient(this.transport);
    this.responses = new ResponsesService(this.transport);
    this.messages = new MessagesService(this.transport);
  }
}

/** Creates an {@link Ai4ts} client. */
export function createClient(options: Ai4tsOptions = {}): Ai4ts {
  return new Ai4ts(options);
}
