/**
 * The last step before a reply leaves the proxy, shared by both adapters: every token of the context is scrubbed
 * from the headers, the JSON body and each SSE message, and every header value is made sendable (the session id
 * encoded, anything else that could not be sent dropped), so that no reply can fail on its headers.
 */
import { redact, redactJsonText, scrubJson } from '@ai4ts/core/internal';
import type { SseMessage } from '@ai4ts/sse';
import type { GatewayContext } from '../context.js';
import type { Reply } from './incoming.js';

/** A reply ready to send: sendable headers, and a body (JSON or text) or an SSE stream, both scrubbed. */
export interface Outgoing {
  status: number;
  headers: Record<string, string>;
  body?: string;
  stream?: AsyncIterable<SseMessage>;
  trailers?: Record<string, () => string | undefined>;
}

/** The header that carries session ids, which come from clients and the daemon and may hold any character. */
const SESSION_HEADER = 'x-session-id';

/**
 * Encodes a header value: visible ASCII (0x21-0x7E) other than `%` stays as is; every other byte of its UTF-8 form
 * (spaces, controls, CR/LF, anything above U+007F) is written `%XX`. `decodeURIComponent` gives the value back; a
 * lone surrogate, which UTF-8 cannot carry, comes back as U+FFFD.
 */
export function encodeHeaderValue(value: string): string {
  if (/^[\x21-\x24\x26-\x7e]*$/.test(value)) return value;
  let out = '';
  for (const byte of new TextEncoder().encode(value))
    out +=
      byte >= 0x21 && byte <= 0x7e && byte !== 0x25
        ? String.fromCharCode(byte)
        : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  return out;
}

/** Whether both node:http and fetch's `Headers` send the value unchanged (printable ASCII, space and tab). */
export function isSendableHeaderValue(value: string): boolean {
  return /^[\t\x20-\x7e]*$/.test(value);
}

/** Reply headers that carry data from clients or the daemon; the proxy's own headers hold no secret. */
const DATA_HEADERS = new Set(['x-session-id', 'retry-after']);

/**
 * The reply as it may leave: the context's headers under the reply's, each scrubbed, the session id encoded and
 * any other value that cannot be sent dropped; the body (serialized, when JSON) scrubbed; each stream message scrubbed.
 */
export function outgoing(context: GatewayContext, reply: Reply): Outgoing {
  const headers: Record<string, string> = {};
  for (const [name, raw] of Object.entries({ ...context.headers, ...reply.headers })) {
    const key = name.toLowerCase();
    const value = DATA_HEADERS.has(key) ? redact(raw, context.secrets) : raw;
    if (key === SESSION_HEADER) headers[name] = encodeHeaderValue(value);
    else if (isSendableHeaderValue(value)) headers[name] = value;
  }
  const out: Outgoing = { status: reply.status, headers };
  if (reply.stream) {
    out.stream = scrubbed(reply.stream, context.secrets);
    // The gateway's own values (a cost): no secret to scrub.
    if (reply.trailers) out.trailers = reply.trailers;
  }
  else if (reply.body !== undefined) {
    out.body = JSON.stringify(scrubJson(reply.body, context.secrets));
    out.headers = { 'content-type': 'application/json', ...headers };
  } else if (reply.text !== undefined) out.body = redact(reply.text, context.secrets);
  return out;
}

/** A message with every secret scrubbed from its data. */
export function scrubMessage(message: SseMessage, secrets: readonly string[]): SseMessage {
  return { ...message, data: redactJsonText(message.data, secrets) };
}

/**
 * The messages with every secret scrubbed from their data. An iterator object rather than a generator: `return()`
 * reaches the source even before the first `next()`, so that an answer that fails early still cancels the upstream.
 */
function scrubbed(source: AsyncIterable<SseMessage>, secrets: readonly string[]): AsyncIterable<SseMessage> {
  // No secret that redaction would replace (none configured, or all too short): nothing to scrub, no layer.
  if (!secrets.some((secret) => redact(secret, [secret]) !== secret)) return source;
  return {
    [Symbol.asyncIterator]() {
      const iterator = source[Symbol.asyncIterator]();
      return {
        async next() {
          const next = await iterator.next();
          return next.done ? next : { done: false, value: scrubMessage(next.value, secrets) };
        },
        async return() {
          await iterator.return?.();
          return { done: true, value: undefined };
        },
      };
    },
  };
}
