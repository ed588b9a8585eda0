/**
 * Chat Completions, defined once ({@link CHAT_PROTOCOL}): everything the service, the front door, the gateway and
 * the scripted server know of this protocol comes from here.
 */
import { ProtocolError } from '@ai4ts/core';
import type { ProtocolDefinition } from '@ai4ts/core/internal';
import { ChatStreamListener } from './listener.js';
import { type ChatLoopRequest, chatLoopTurns } from './loop.js';
import {
  CHAT_COMPLETIONS_PATH,
  type ChatRequestOptions,
  toCreateBody,
  toStreamBody,
  toWireRequest,
} from './request.js';
import { ChatStream, isChatCompletion } from './stream.js';
import type { ChatCompletion, ChatMessage } from './types.js';
import { CHAT_REQUEST_FIELDS } from './types.js';

/** The definition of Chat Completions. */
export type ChatProtocol = ProtocolDefinition<
  ChatLoopRequest,
  ChatCompletion,
  ChatMessage,
  ChatStreamListener,
  ChatStream,
  ChatRequestOptions
>;

/**
 * OpenAI Chat Completions as every OpenAI-compatible provider serves it. Its quirks: `stream_options` where the
 * preset accepts it, `[DONE]` without a finish reason where the preset says so, `response_format` or JSON mode for
 * structured output, and a streamed request answered with one JSON completion read as one event.
 */
export const CHAT_PROTOCOL: ChatProtocol = {
  name: 'chat',
  path: CHAT_COMPLETIONS_PATH,
  requestFields: CHAT_REQUEST_FIELDS,
  summarize: (completion) => ({
    id: completion.id,
    model: completion.model,
    finishReasons: completion.choices.flatMap((choice) => (choice.finish_reason ? [choice.finish_reason] : [])),
    usage: completion.usage,
    output: completion.choices.map((choice) => choice.message),
  }),
  isResult: isChatCompletion,
  toWireRequest,
  createBody: toCreateBody,
  streamBody: toStreamBody,
  createListener: (options, quirks) =>
    new ChatStreamListener({
      thinkTags: options?.thinkTags,
      finishOnDone: quirks.doneWithoutFinishReason,
      finishOnEnd: quirks.endsWithoutDone,
    }),
  parseCreated: (json, text) => {
    // The provider's completion is returned as sent; only its `choices` array is checked.
    if (!isChatCompletion(json)) throw new ProtocolError('The response is not a chat completion (no choices)', { line: text });
    return json;
  },
  acceptsJsonStream: true,
  loopTurns: chatLoopTurns,
  Stream: ChatStream,
};
