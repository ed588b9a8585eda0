/** SSE text as servers send it, for tests that feed a stream or serve one. */
import { encodeSse } from '@ai4ts/sse';

/** One SSE frame, blank line included: a string `data` is sent as it is, anything else as JSON. */
export function sseFrame(data: unknown, event?: string): string {
  return encodeSse({ data: typeof data === 'string' ? data : JSON.stringify(data), ...(event !== undefined && { event }) });
}

/**
 * The SSE text of the payloads, one frame each. `named` names each frame after its payload's `type`, as the
 * Responses and Messages APIs do; Chat Completions frames have no name.
 */
export function sseText(payloads: readonly unknown[], options: { named?: boolean } = {}): string {
  let text = '';
  for (const payload of payloads) text += sseFrame(payload, options.named ? typeOf(payload) : undefined);
  return text;
}

function typeOf(payload: unknown): string | undefined {
  const type = typeof payload === 'object' && payload !== null ? Reflect.get(payload, 'type') : undefined;
  return typeof type === 'string' ? type : undefined;
}
