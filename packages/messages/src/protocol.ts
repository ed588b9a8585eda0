/**
 * Anthropic Messages, defined once ({@link MESSAGES_PROTOCOL}): everything the service, the front door, the gateway
 * and the scripted server know of this protocol comes from here.
 */
import type { ProtocolDefinition } from '@ai4ts/core/internal';
import { toChatUsage, toFinishReason } from './convert.js';
import { MessagesStreamListener } from './listener.js';
import { type MessagesLoopRequest, messagesLoopTurns } from './loop.js';
import { readCreatedMessage } from './parse.js';
import {
  MESSAGES_PATH,
  type MessagesRequestOptions,
  toCreateBody,
  toStreamBody,
  toWireRequest,
} from './request.js';
import { isMessage, MessagesStream } from './stream.js';
import type { Message, MessageParam } from './types.js';
import { MESSAGES_REQUEST_FIELDS } from './types.js';

/** The definition of Anthropic Messages. */
export type MessagesProtocol = ProtocolDefinition<
  MessagesLoopRequest,
  Message,
  MessageParam,
  MessagesStreamListener,
  MessagesStream,
  MessagesRequestOptions
>;

/** Anthropic Messages: named stream events of content blocks, structured output natively or as a forced tool. */
export const MESSAGES_PROTOCOL: MessagesProtocol = {
  name: 'messages',
  path: MESSAGES_PATH,
  requestFields: MESSAGES_REQUEST_FIELDS,
  summarize: (message) => ({
    id: message.id,
    model: message.model,
    finishReasons: message.stop_reason ? [toFinishReason(message.stop_reason)] : [],
    usage: toChatUsage(message.usage),
    output: [{ role: message.role, content: message.content }],
  }),
  isResult: isMessage,
  toWireRequest,
  createBody: toCreateBody,
  streamBody: toStreamBody,
  createListener: () => new MessagesStreamListener(),
  parseCreated: readCreatedMessage,
  acceptsJsonStream: false,
  loopTurns: messagesLoopTurns,
  Stream: MessagesStream,
};
