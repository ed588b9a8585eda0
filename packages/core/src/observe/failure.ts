/**
 * How a failure is described to a span and a log line. An error's message may quote content: a tool's thrown
 * message its arguments, a provider's error body the user's text (a 401 that echoes the request). Without content
 * recording the description is built only from what the SDK itself knows: the class, the HTTP status and code, the
 * tool's name; the messages the SDK writes itself without content (a timeout, an abort, a connection error) stay.
 * The call's secrets are redacted either way.
 */
import { AbortError, ApiError, ConnectionError, TimeoutError, ToolError } from '../errors.js';
import { redact } from '../internal/fail.js';

/** The failure's message fit for a span or a log line: the message itself with `content`, else one without it. */
export function failureMessage(error: unknown, content: boolean, secrets: readonly string[]): string {
  if (!(error instanceof Error)) return content ? redact(String(error), secrets) : 'A non-Error value was thrown';
  if (content || error instanceof TimeoutError || error instanceof AbortError || error instanceof ConnectionError) {
    return redact(error.message, secrets);
  }
  if (error instanceof ToolError) return `Tool "${error.toolName}" failed`;
  if (error instanceof ApiError) {
    const status = error.status === undefined ? 'in-stream error' : `HTTP ${error.status}`;
    return `${status}${error.code === undefined ? '' : `, code ${redact(error.code, secrets)}`}`;
  }
  return 'details withheld: they may quote content';
}

/**
 * The failure as an exception for a span: its class, {@link failureMessage}, and its stack without the message
 * line that heads it (the frames hold code locations, not content).
 */
export function failureException(
  error: Error,
  content: boolean,
  secrets: readonly string[],
): { name: string; message: string; stack?: string } {
  const message = failureMessage(error, content, secrets);
  const head = `${error.name}: ${error.message}`;
  const frames = error.stack?.startsWith(head) ? error.stack.slice(head.length) : undefined;
  return frames === undefined ? { name: error.name, message } : { name: error.name, message, stack: `${error.name}: ${message}${frames}` };
}
