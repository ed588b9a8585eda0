/** The OpenAI request the proxy accepts, checked with zod at the boundary, and what the daemon is sent from it. */
import * as z from 'zod/mini';

const ContentPart = z.looseObject({ type: z.string(), text: z.optional(z.string()) });

const Message = z.looseObject({
  role: z.string(),
  content: z.nullish(z.union([z.string(), z.array(ContentPart)])),
});

/** A Chat Completions request as the proxy reads it; other OpenAI fields are accepted and ignored. */
export const ProxyRequestSchema = z.looseObject({
  model: z.string().check(z.minLength(1)),
  messages: z.array(Message).check(z.minLength(1, 'messages must not be empty')),
  stream: z.nullish(z.boolean()),
  stream_options: z.nullish(z.looseObject({ include_usage: z.nullish(z.boolean()) })),
  user: z.nullish(z.string()),
  metadata: z.nullish(z.record(z.string(), z.unknown())),
});

/** A validated proxy request. */
export type ProxyRequest = z.infer<typeof ProxyRequestSchema>;

/** The last user message's text parts, joined with a newline; undefined when there is no user message. */
export function lastUserText(request: ProxyRequest): string | undefined {
  const message = request.messages.findLast((m) => m.role === 'user');
  if (!message) return undefined;
  const { content } = message;
  if (typeof content === 'string') return content;
  return (content ?? [])
    .filter((part) => part.type === 'text' && typeof part.text === 'string')
    .map((part) => part.text)
    .join('\n');
}

/** The request's session id: `metadata.session_id` wins over `user`. */
export function requestSessionId(request: ProxyRequest): string | undefined {
  const fromMetadata = request.metadata?.session_id;
  if (typeof fromMetadata === 'string' && fromMetadata !== '') return fromMetadata;
  return request.user || undefined;
}
