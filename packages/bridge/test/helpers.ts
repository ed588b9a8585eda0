/** Test helpers: SSE framing for both dialects, readers for results. */
import type { BridgeEvent } from '@ai4ts/bridge';

/** One `data:` block of the typed-event dialect. */
export const typed = (event: Record<string, unknown>): string => `data: ${JSON.stringify(event)}\n\n`;

/** One block of the named-event dialect. */
export const named = (event: string, data: unknown): string => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

/** A whole typed-dialect answer: reasoning, a daemon-run tool round, text over two rounds, usage per round, done. */
export const TYPED_ANSWER = [
  typed({ type: 'reasoning', content: 'Let me ' }),
  typed({ type: 'reasoning', content: 'check.' }),
  typed({ type: 'tool_start', id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' }),
  typed({ type: 'tool_result', id: 'call_1', name: 'get_weather', output: '18C', success: true, duration_ms: 42 }),
  typed({ type: 'tokens', prompt: 10, completion: 5, total: 15 }),
  typed({ type: 'reasoning', content: ' Now answer.' }),
  typed({ type: 'text', content: 'It is ' }),
  typed({ type: 'text', content: '18C in Paris.' }),
  typed({ type: 'tokens', prompt: 20, completion: 7, total: 27 }),
  typed({
    type: 'done',
    tokens: { prompt: 30, completion: 12, total: 42 },
    tool_calls: 1,
    session_id: 'daemon-session',
  }),
].join('');

/** A whole named-dialect answer. */
export const NAMED_ANSWER = [
  named('start', { message_id: 'm-1' }),
  named('message', { content: 'Hello' }),
  named('message', { content: ', world' }),
  named('done', { message_id: 'm-1' }),
].join('');

/** A body as a ReadableStream cut into the given pieces. */
export function streamOf(pieces: Array<string | Uint8Array>): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let i = 0;
  return new ReadableStream({
    pull(controller) {
      const piece = pieces[i++];
      if (piece === undefined) controller.close();
      else controller.enqueue(typeof piece === 'string' ? encoder.encode(piece) : piece);
    },
  });
}

/** Collects every event of a reader, or the error it threw. */
export async function drain(events: AsyncIterable<BridgeEvent>): Promise<{ events: BridgeEvent[]; error?: unknown }> {
  const out: BridgeEvent[] = [];
  try {
    for await (const event of events) out.push(event);
    return { events: out };
  } catch (error) {
    return { events: out, error };
  }
}
/** The body reader of a response that must have a body. */
export function readerOf(response: Response): ReadableStreamDefaultReader<Uint8Array> {
  if (!response.body) throw new Error('The response has no body');
  return response.body.getReader();
}
