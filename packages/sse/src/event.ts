/**
 * The decoded event: a leaf module, so that the decoder, the readers and the error that carries events
 * (`SseError.partial`) can all import it without importing one another.
 */

/** One dispatched server-sent event. */
export interface SseEvent {
  /** The block's `event:` field, or "message" when the block named none. */
  event: string;
  /** The block's `data:` lines, joined with "\n". */
  data: string;
  /** The block's own `id:` field; absent when the block had none. */
  id?: string;
}
