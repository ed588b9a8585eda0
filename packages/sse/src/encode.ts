/** One message for {@link encodeSse}. */
export interface SseMessage {
  /** The event type; omitted, it decodes as "message". */
  event?: string;
  /** Any text: each line becomes a `data:` line (CR and CRLF read as LF). */
  data: string;
  id?: string;
  /** Reconnection time in milliseconds: a non-negative integer. */
  retry?: number;
  /** Comment lines, ignored by decoders (keep-alives, notes). */
  comment?: string;
}

const LINE_BREAK = /\r\n|\r|\n/;

/**
 * Encodes one message as an event-stream block, blank line included. Whatever it encodes decodes back to the same
 * event (with CR and CRLF in `data` read as LF).
 * @throws TypeError when `event` or `id` holds a line break, `id` holds NUL (decoders ignore such ids), or `retry`
 * is not a non-negative integer.
 */
export function encodeSse(message: SseMessage): string {
  let out = '';
  if (message.comment !== undefined) for (const line of message.comment.split(LINE_BREAK)) out += `: ${line}\n`;
  if (message.event !== undefined) out += `event: ${singleLine('event', message.event)}\n`;
  if (message.id !== undefined) {
    if (message.id.includes('\0')) throw new TypeError('An SSE id cannot contain NUL');
    out += `id: ${singleLine('id', message.id)}\n`;
  }
  if (message.retry !== undefined) {
    if (!Number.isSafeInteger(message.retry) || message.retry < 0)
      throw new TypeError(`An SSE retry must be a non-negative integer, got ${message.retry}`);
    out += `retry: ${message.retry}\n`;
  }
  const { data } = message;
  // One data line without a regex split: the common case (JSON text never holds a raw line break).
  if (data.indexOf('\n') === -1 && data.indexOf('\r') === -1) out += `data: ${data}\n`;
  else for (const line of data.split(LINE_BREAK)) out += `data: ${line}\n`;
  return `${out}\n`;
}

function singleLine(field: string, value: string): string {
  if (value.includes('\n') || value.includes('\r')) throw new TypeError(`An SSE ${field} cannot contain CR or LF`);
  return value;
}
