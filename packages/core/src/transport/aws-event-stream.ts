/**
 * AWS's binary event-stream framing (`application/vnd.amazon.eventstream`) as a preset's {@link StreamFraming}:
 * each event frame becomes the protocol's SSE event through `toEvent`; an exception frame (`:message-type`
 * `exception`, such as Bedrock's `throttlingException`) or an error frame is an {@link ApiError} whose `code` is the
 * exception's name (retried before the first event when it is in `RETRYABLE_STREAM_ERROR_CODES`); a corrupt or
 * truncated body is a {@link ProtocolError}.
 */
import { EventStreamError, type EventStreamMessage, parseEventStream, type SseEvent } from '@ai4ts/sse';
import { ApiError, ProtocolError } from '../errors.js';
import { redact } from '../internal/fail.js';
import type { StreamFraming } from './providers.js';

/** The content type of AWS event streams. */
export const AWS_EVENT_STREAM_TYPE = 'application/vnd.amazon.eventstream';

/** The framing whose event frames `toEvent` reads (it throws a ProtocolError for a frame it cannot read). */
export function awsEventStream(toEvent: (message: EventStreamMessage) => SseEvent): StreamFraming {
  return {
    contentType: AWS_EVENT_STREAM_TYPE,
    async *decode(body, secrets) {
      try {
        for await (const message of parseEventStream(body)) yield [eventOf(message, toEvent, secrets)];
      } catch (error) {
        if (error instanceof EventStreamError) {
          throw new ProtocolError(`Corrupt AWS event stream: ${error.message}`, { cause: error });
        }
        throw error;
      }
    },
  };
}

function eventOf(
  message: EventStreamMessage,
  toEvent: (message: EventStreamMessage) => SseEvent,
  secrets: readonly string[],
): SseEvent {
  const kind = stringHeader(message, ':message-type');
  if (kind === 'event') return toEvent(message);
  const text = redact(new TextDecoder().decode(message.payload), secrets);
  if (kind === 'exception') {
    const code = stringHeader(message, ':exception-type') ?? 'exception';
    throw new ApiError(`${code}: ${messageOf(text)}`, { code, type: code, body: text });
  }
  if (kind === 'error') {
    const code = stringHeader(message, ':error-code') ?? 'error';
    const said = redact(stringHeader(message, ':error-message') ?? '', secrets);
    throw new ApiError(`${code}: ${said}`, { code, type: code, body: text });
  }
  throw new ProtocolError(`An AWS event-stream frame of unknown :message-type ${String(kind)}`);
}

/** A string header's value. */
export function stringHeader(message: EventStreamMessage, name: string): string | undefined {
  const header = message.headers[name];
  return header?.type === 'string' ? header.value : undefined;
}

/** AWS puts an exception's text in `{"message": ...}` (or `Message`). */
function messageOf(text: string): string {
  try {
    const json: unknown = JSON.parse(text);
    if (json !== null && typeof json === 'object') {
      const message = 'message' in json ? json.message : 'Message' in json ? json.Message : undefined;
      if (typeof message === 'string') return message;
    }
  } catch {
    // Not JSON: the text itself.
  }
  return text;
}
