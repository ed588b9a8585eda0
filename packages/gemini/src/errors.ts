/** The error of a prompt Gemini refused to answer. */
import { ApiError, type ApiErrorOptions } from '@ai4ts/core';

/**
 * Gemini blocked the prompt (`promptFeedback.blockReason`: SAFETY, BLOCKLIST, PROHIBITED_CONTENT, OTHER, ...): no
 * candidate comes. `blockReason` is the API's reason, `body.promptFeedback` its safety ratings.
 */
export class PromptBlockedError<P = unknown> extends ApiError<P> {
  override name = 'PromptBlockedError';
  readonly blockReason: string;

  constructor(message: string, blockReason: string, options: ApiErrorOptions<P> = {}) {
    super(message, options);
    this.blockReason = blockReason;
  }
}
