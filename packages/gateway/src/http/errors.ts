/**
 * The gateway's own failures: an HTTP status with an OpenAI-shaped error object, which each inbound codec renders in
 * its protocol's shape. Nothing here may hold a secret: the message is written by the gateway, never quoted from a key.
 */
import type { OpenAIErrorObject } from '@ai4ts/bridge';

/** A failure the gateway answers itself, with its status and an OpenAI error object. */
export class HttpError extends Error {
  override name = 'HttpError';
  readonly status: number;
  readonly error: OpenAIErrorObject;
  readonly headers: Record<string, string>;

  constructor(status: number, error: OpenAIErrorObject, headers: Record<string, string> = {}) {
    super(error.message);
    this.status = status;
    this.error = error;
    this.headers = headers;
  }
}

/** An `invalid_request_error` object. */
export function invalid(message: string, param: string | null = null, code: string | null = null): OpenAIErrorObject {
  return { message, type: 'invalid_request_error', param, code };
}
