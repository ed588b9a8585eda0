/**
 * The events a dialect reader yields: the normalized events of @ai4ts/core, plus three that only a daemon's
 * dialect has: its ids at the start, its ids at the end, and event types the dialect does not know.
 */
import type { NormalizedEvent, Usage } from '@ai4ts/core';

/** The daemon opened its answer; the ids it announced (a message id, sometimes a session id). */
export interface StartEvent {
  type: 'start';
  sessionId?: string | undefined;
  messageId?: string | undefined;
}

/** The daemon's terminal event: the answer is complete. Its ids, and its own usage total when it sent one. */
export interface DoneEvent {
  type: 'done';
  sessionId?: string | undefined;
  messageId?: string | undefined;
  /** The total the daemon reported on its terminal event; the summed `usage` events are authoritative. */
  usage?: Usage | undefined;
  raw: unknown;
}

/** An event type the dialect does not map: kept and surfaced, never thrown. */
export interface UnknownEvent {
  type: 'unknown';
  /** The daemon's type for it (its `type` field or SSE event name); '' when it had none. */
  name: string;
  /** The parsed JSON data, or the raw text when it was not JSON. */
  data: unknown;
}

/**
 * The signature of the reasoning just streamed (Anthropic's thinking signature, OpenAI Responses' `encrypted_content`,
 * Gemini's `thoughtSignature`): valid only at the vendor that made it, which needs it back with the reasoning on the
 * next turn. Writers of a protocol with a place for it send it on.
 */
export interface ReasoningSignatureEvent {
  type: 'reasoning.signature';
  signature: string;
  /** The protocol of the vendor that made it; Anthropic's Messages when absent. */
  origin?: 'messages' | 'responses' | 'gemini';
  /**
   * Anthropic's `redacted_thinking`: a reasoning block of its own, without text, whose encrypted data `signature`
   * holds (not the signature of the reasoning before).
   */
  redacted?: boolean;
}

/** Every event a bridge reader yields and a bridge writer accepts. */
export type BridgeEvent = NormalizedEvent | StartEvent | DoneEvent | UnknownEvent | ReasoningSignatureEvent;
