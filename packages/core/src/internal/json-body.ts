/**
 * A response's JSON body, read once for the Transport's `json()` and every protocol's `create`: below both, so the
 * Transport needs nothing of the model-call code above it.
 */
import { ProtocolError } from '../errors.js';
import { redactJsonText, toAi4tsError } from './fail.js';

/**
 * A response's JSON body, read whole with `secrets` redacted from its text: a read that breaks is the typed error
 * (an AbortError when `signal` aborted), a body that is not JSON a ProtocolError holding the text.
 */
export async function readJsonBody(
  response: Response,
  signal: AbortSignal | undefined,
  secrets: readonly string[],
): Promise<{ text: string; json: unknown }> {
  let text: string;
  try {
    text = redactJsonText(await response.text(), secrets);
  } catch (error) {
    throw toAi4tsError(error, { signal });
  }
  try {
    return { text, json: JSON.parse(text) };
  } catch (cause) {
    throw new ProtocolError(`The response body is not JSON (status ${response.status})`, { cause, line: text });
  }
}
