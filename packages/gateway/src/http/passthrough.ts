/**
 * `state: 'upstream'`: a Responses request to a Responses upstream that keeps its own conversations goes through
 * unchanged (its `previous_response_id`, `item_reference`s, `store` and `background` included, its model the
 * route's), and so does the answer, so that the ids the client continues by are the upstream's. The gateway stores
 * nothing; the reply is scrubbed of every secret on its way out, as every reply is.
 */
import type { SseMessage } from '@ai4ts/sse';
import { parseSse } from '@ai4ts/sse';
import type { GatewayContext } from '../context.js';
import type { UpstreamTarget } from '../upstreams/targets.js';
import { HttpError } from './errors.js';
import type { Reply } from './incoming.js';
import type { StreamSlot } from './limits.js';

/** The upstream's answer to `body`, as it sent it. */
export async function passThrough(
  context: GatewayContext,
  target: UpstreamTarget,
  body: Record<string, unknown>,
  signal: AbortSignal,
): Promise<Reply> {
  if (!target.forward)
    throw new HttpError(500, { message: 'This route cannot pass requests through', type: 'server_error', param: null, code: null });
  if (body.stream !== true) {
    const response = await target.forward(body, signal);
    return { status: 200, headers: {}, body: await response.json() };
  }
  // Counted against maxConcurrentStreams like any stream, before the upstream is contacted.
  const slot = context.streams.take(signal);
  try {
    const response = await target.forward(body, signal);
    return { status: 200, headers: {}, stream: messagesOf(response, signal, slot) };
  } catch (error) {
    slot.release();
    throw error;
  }
}

/** The upstream's SSE messages as they came, the slot given back however the stream ends. */
async function* messagesOf(response: Response, signal: AbortSignal, slot: StreamSlot): AsyncGenerator<SseMessage> {
  try {
    for await (const event of parseSse(response, { signal })) yield { event: event.event, data: event.data };
  } finally {
    slot.release();
  }
}
