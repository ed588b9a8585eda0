/** Structured access logs: one entry per request, built from what the gateway knows, never from a header or a key. */

/** One request, as the access log records it. */
export interface AccessLogEntry {
  /** ISO time the request arrived. */
  time: string;
  /** The request's id (its `x-request-id` when it sent a plain one, else a new UUID), also sent back in `x-request-id`. */
  requestId: string;
  method: string;
  path: string;
  /** The route template the path matched (`/v1/chat/completions`, `/v1beta/models/{model}:generateContent`). */
  route?: string;
  /** The protocol the client spoke. */
  protocol?: string;
  model?: string;
  /**
   * The upstream that answered, or the last one asked: its route's name for it, else its kind and host
   * (`messages@api.anthropic.com`, `typed@127.0.0.1:9000`).
   */
  upstream?: string;
  /** How many of the route's upstreams were asked (`x-ai4ts-attempts`); more than 1 after a fallback. */
  attempts?: number;
  status: number;
  /** Until the answer was complete (for a stream: its last event), in milliseconds. */
  durationMs: number;
  /** Until the upstream's first event arrived, in milliseconds (time to first token). */
  firstEventMs?: number;
  /** Retries of the upstream call (before its headers or its first event). */
  retries?: number;
  stream?: boolean;
  /** A resumable stream's id. */
  streamId?: string;
  /** A reconnection that resumed a stream. */
  resumed?: boolean;
  tokens?: { prompt: number; completion: number; total: number };
  /** The name of the virtual key the request presented (never the key). */
  keyName?: string;
  /**
   * What the call cost in USD, from the price table: its usage priced, or for a virtual key's call cut short before
   * any usage, what it was charged (docs/operations.md, "Spend and budgets"). Absent for a model without a price.
   */
  cost?: number;
  /** The error code of a failed answer. */
  error?: string;
}

/** A logger that writes each entry as one JSON line (to stderr by default). */
export function jsonLines(write: (line: string) => void = (line) => process.stderr.write(line)): (entry: AccessLogEntry) => void {
  return (entry) => write(`${JSON.stringify(entry)}\n`);
}
