/** The protocol codecs by name: what the routes serve inbound and the upstream targets speak outbound. */
import { chatCodec } from './chat.js';
import { geminiCodec } from './gemini.js';
import { messagesCodec } from './messages.js';
import type { GatewayProtocol, ProtocolCodec } from './neutral.js';
import { responsesCodec } from './responses.js';

/** The protocols' codecs, by name. */
export const CODECS: Readonly<Record<GatewayProtocol, ProtocolCodec>> = {
  chat: chatCodec,
  responses: responsesCodec,
  messages: messagesCodec,
  gemini: geminiCodec,
};
