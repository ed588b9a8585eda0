/** Record and replay: a listener's trace as JSONL, and back through a fresh listener to the same final state. */
import { ProtocolError } from '@ai4ts/core';
import { ResponsesStreamListener } from './listener.js';

/** A trace (a listener's `events`) as JSON Lines: one event per line, ready to attach to a bug report. */
export function eventsToJsonl(events: Iterable<unknown>): string {
  let out = '';
  for (const event of events) out += `${JSON.stringify(event)}\n`;
  return out;
}

/** Parses JSON Lines back into events; blank lines are skipped, a bad line is a ProtocolError naming it. */
export function eventsFromJsonl(text: string): unknown[] {
  const events: unknown[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]?.trim() ?? '';
    if (line === '') continue;
    try {
      events.push(JSON.parse(line));
    } catch (cause) {
      throw new ProtocolError(`Line ${i + 1} of the recorded trace is not JSON`, { cause, line });
    }
  }
  return events;
}

/**
 * Pushes recorded events through a listener and ends it; the listener then holds the same final state as the
 * one that recorded them (`response`, `status`, `error` with its `partial`, ...). Never throws: a failure of the
 * recorded stream is the listener's `error`.
 */
export function replayEvents(
  events: Iterable<unknown>,
  listener: ResponsesStreamListener = new ResponsesStreamListener(),
): ResponsesStreamListener {
  for (const event of events) {
    try {
      listener.push(event);
    } catch {
      // Recorded as the listener's error; later events only join the trace, as they did when recorded.
    }
  }
  try {
    listener.end();
  } catch {
    // The same: `listener.error` holds it.
  }
  return listener;
}
