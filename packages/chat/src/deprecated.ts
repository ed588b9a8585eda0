/** Names of the previous release, kept for one more: each is its new name under the old one. */
import { type ChatCompletionCreateParams, ChatCompletionCreateParamsSchema } from './types.js';

/** @deprecated Renamed {@link ChatCompletionCreateParams}, the openai SDK's name; goes in the next release. */
export type ChatCompletionRequest = ChatCompletionCreateParams;
/** @deprecated Renamed {@link ChatCompletionCreateParamsSchema}; goes in the next release. */
export const ChatCompletionRequestSchema = ChatCompletionCreateParamsSchema;
