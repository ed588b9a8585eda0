/**
 * `@ai4ts/gateway/in-process`: the gateway's codecs inside the caller's process, as a fetch. The front door's
 * `translate: true` sends a protocol client's requests here when its provider speaks another protocol
 * (`new Ai4ts({ provider: 'anthropic', translate: true }).chat`): the request is translated, sent natively, and the
 * answer translated back, exactly as through a gateway server, with no server and no port. A separate entry with no
 * `node:` import, loaded only when translation is on.
 */
import type { AccessTokenSource, ProviderPreset } from '@ai4ts/core';
import { resolveContext } from './context.js';
import { serveFetch } from './http/adapters.js';

/** The provider a {@link createTranslator} fetch reaches, and how. */
export interface TranslatorOptions {
  /** Its preset, with the client's overrides (baseURL, headers, query) already applied. */
  provider: ProviderPreset;
  /** Its key; the preset's environment variable when omitted. */
  apiKey?: string | undefined;
  /** An expiring bearer token instead of a key (Vertex AI). */
  accessToken?: AccessTokenSource | undefined;
  /** The fetch that reaches the provider; the global one when omitted. */
  fetch?: ((input: string, init: RequestInit) => Promise<Response>) | undefined;
}

/** A fetch as core's Transport calls it. */
export type TranslatingFetch = (input: string, init: RequestInit) => Promise<Response>;

/**
 * A fetch that answers a request of any protocol (its path says which: `/v1/chat/completions`, `/v1/responses`,
 * `/v1/messages`, `/v1beta/models/{model}:generateContent`) from the provider, translated to and from its protocol.
 * What cannot be carried is named in `x-ai4ts-dropped`, as the gateway names it. Throws a RangeError when the
 * provider cannot be reached at all (a preset without a URL, or without a key where one is needed).
 */
export function createTranslator(options: TranslatorOptions): TranslatingFetch {
  const given = options.fetch;
  const context = resolveContext(
    {
      routes: [{ model: '*', provider: options.provider, upstreamToken: options.apiKey, accessToken: options.accessToken }],
      // The gateway's upstream calls go through core's Transport, which calls a fetch with a URL string.
      ...(given && { fetch: (input, init) => given(input instanceof Request ? input.url : String(input), init ?? {}) }),
      // The client's own Transport retries, times out and watches the whole call, as it does any provider's: the
      // gateway inside does none of it a second time.
      upstreamRetry: { maxRetries: 0 },
      upstreamTimeouts: { headers: 0, firstEvent: 0, idle: 0 },
      heartbeatMs: 0,
      maxConcurrentStreams: Number.POSITIVE_INFINITY,
    },
    true,
  );
  return (input, init) => serveFetch(context, new Request(input, init));
}
