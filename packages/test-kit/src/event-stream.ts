/**
 * AWS event-stream frames made by AWS's own codec (@smithy/eventstream-codec), so the decoder under test never
 * checks itself against its own encoding.
 */
import { EventStreamCodec, Int64, type MessageHeaders } from '@smithy/eventstream-codec';

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const codec = new EventStreamCodec(
  (bytes) => decoder.decode(bytes),
  (text) => encoder.encode(text),
);

export type { MessageHeaders };
export { Int64 };

/** One binary frame of `headers` and `payload` (text as UTF-8). */
export function eventStreamFrame(headers: MessageHeaders, payload: Uint8Array | string = new Uint8Array(0)): Uint8Array {
  return codec.encode({ headers, body: typeof payload === 'string' ? encoder.encode(payload) : payload });
}

/** A Bedrock event frame: `:message-type` event, `:event-type` `eventType`, a JSON payload. */
export function bedrockEventFrame(eventType: string, body: unknown): Uint8Array {
  return eventStreamFrame(
    {
      ':event-type': { type: 'string', value: eventType },
      ':content-type': { type: 'string', value: 'application/json' },
      ':message-type': { type: 'string', value: 'event' },
    },
    JSON.stringify(body),
  );
}

/** A Bedrock in-stream exception frame: `:message-type` exception, `:exception-type` `exceptionType`. */
export function bedrockExceptionFrame(exceptionType: string, message: string): Uint8Array {
  return eventStreamFrame(
    {
      ':exception-type': { type: 'string', value: exceptionType },
      ':content-type': { type: 'string', value: 'application/json' },
      ':message-type': { type: 'string', value: 'exception' },
    },
    JSON.stringify({ message }),
  );
}

/** The frames one after another, as one byte array. */
export function concatBytes(parts: readonly Uint8Array[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
