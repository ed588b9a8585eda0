/**
 * Amazon Bedrock's runtime API (`https://bedrock-runtime.{region}.amazonaws.com`), signed with AWS SigV4.
 *
 * Anthropic's models speak Anthropic Messages there: `POST /model/{modelId}/invoke` (JSON) and
 * `/invoke-with-response-stream`, the body without `model` and `stream` and with `anthropic_version`. A stream comes
 * as AWS event-stream frames, each a `chunk` whose payload is `{"bytes": base64 of one Anthropic SSE event's JSON}`;
 * the Messages listener reads those events as it reads Anthropic's own SSE.
 *
 * Every model speaks the Converse API there (`@ai4ts/converse`): `/model/{modelId}/converse` and `/converse-stream`,
 * sent as the protocol builds them; each event frame of a Converse stream (`messageStart`, `contentBlockDelta`, ...)
 * becomes one SSE event named by its `:event-type`, its payload the data.
 */
import type { EventStreamMessage, SseEvent } from '@ai4ts/sse';
import { Ai4tsError, isRecord, ProtocolError } from '../errors.js';
import { type AwsCredentialSource, AwsSigner } from './aws.js';
import { awsEventStream, stringHeader } from './aws-event-stream.js';
import { describeError } from '../internal/fail.js';
import { readEnv } from './env.js';
import type { ProviderPreset, WireRequest } from './providers.js';

/** Where a Bedrock preset points, and with which credentials. */
export interface BedrockOptions {
  /** The AWS region (`us-east-1`); default `AWS_REGION`, then `AWS_DEFAULT_REGION`, read when the preset is made. */
  region?: string;
  /** Credentials or a function giving temporary ones; default the `AWS_*` environment variables at request time. */
  credentials?: AwsCredentialSource;
}

/** The anthropic_version Bedrock wants in the body of a Claude request. */
export const BEDROCK_ANTHROPIC_VERSION = 'bedrock-2023-05-31';

/**
 * The preset of Amazon Bedrock in one region: every model through the Converse API (`client.converse`), and
 * Anthropic's models through `client.messages` as well (the model is a Bedrock model id such as `anthropic.claude-3-5-haiku-20241022-v1:0`, an inference profile id such as
 * `us.anthropic.claude-sonnet-4-20250514-v1:0`, or an inference profile ARN; it is URL-encoded into the path).
 *
 * @example
 * ```ts
 * const client = new Ai4ts({ provider: bedrock({ region: 'us-east-1' }) });
 * const message = await client.messages.create({
 *   model: 'us.anthropic.claude-sonnet-4-20250514-v1:0',
 *   max_tokens: 512,
 *   messages: [{ role: 'user', content: 'Hello' }],
 * });
 * ```
 *
 * @throws Ai4tsError when no region is given nor set in the environment, or it is not a region name.
 */
export function bedrock(options: BedrockOptions = {}): ProviderPreset {
  const region = options.region ?? readEnv(['AWS_REGION', 'AWS_DEFAULT_REGION']);
  if (!region) throw new Ai4tsError('bedrock() needs a region: pass region or set AWS_REGION');
  if (!/^[a-z]{2}(-[a-z]+)+-\d+$/.test(region)) throw new Ai4tsError(`"${region}" is not an AWS region`);
  return {
    name: 'bedrock',
    baseURL: `https://bedrock-runtime.${region}.amazonaws.com`,
    apiKeyEnv: [],
    auth: 'none',
    protocol: 'messages',
    signer: new AwsSigner({ service: 'bedrock', region, credentials: options.credentials }),
    rewriteRequest: toInvoke,
    streamFraming: awsEventStream(bedrockEvent),
    // Structured output as a forced tool, which every Messages server understands.
    quirks: { streamOptions: false },
  };
}

/** The Converse API's paths, which the protocol builds whole (the model already in the path). */
const CONVERSE_PATH = /^model\/[^/]+\/converse(-stream)?$/;

/**
 * A Messages request as Bedrock takes it: the model in the path, `anthropic_version` in the body. A Converse
 * request goes as it is.
 */
function toInvoke(request: WireRequest): WireRequest {
  const { path, body } = request;
  const relative = path.replace(/^\/+/, '');
  if (CONVERSE_PATH.test(relative)) return { path: relative, body };
  if (relative !== 'messages' || !isRecord(body) || typeof body.model !== 'string') {
    throw new Ai4tsError(`Bedrock takes Messages (POST /messages with a model) or Converse requests, not ${path}`);
  }
  const { model, stream, ...rest } = body;
  const method = stream === true ? 'invoke-with-response-stream' : 'invoke';
  return { path: `model/${encodeURIComponent(model)}/${method}`, body: { anthropic_version: BEDROCK_ANTHROPIC_VERSION, ...rest } };
}

/** The Converse stream's event types (`ConverseStreamOutput`'s members). */
const CONVERSE_EVENTS: ReadonlySet<string> = new Set([
  'messageStart',
  'contentBlockStart',
  'contentBlockDelta',
  'contentBlockStop',
  'messageStop',
  'metadata',
]);

/**
 * An event frame as the SSE event its protocol's listener reads: a `chunk` of invoke-with-response-stream as the
 * Anthropic event it carries, a Converse event as itself (named by its type, the payload JSON the data).
 */
function bedrockEvent(message: EventStreamMessage): SseEvent {
  const type = stringHeader(message, ':event-type');
  if (type !== undefined && CONVERSE_EVENTS.has(type)) return { event: type, data: new TextDecoder().decode(message.payload) };
  if (type !== 'chunk') throw new ProtocolError(`Bedrock sent an event frame of unknown type ${String(type)}`);
  return anthropicChunk(message);
}

/** A `chunk` frame of invoke-with-response-stream as the Anthropic SSE event it carries. */
function anthropicChunk(message: EventStreamMessage): SseEvent {
  let data: string;
  try {
    const payload: unknown = JSON.parse(new TextDecoder().decode(message.payload));
    if (!isRecord(payload) || typeof payload.bytes !== 'string') throw new Error('no bytes field');
    data = new TextDecoder().decode(Uint8Array.from(atob(payload.bytes), (c) => c.charCodeAt(0)));
    const event: unknown = JSON.parse(data);
    if (!isRecord(event) || typeof event.type !== 'string') throw new Error('no event type');
    return { event: event.type, data };
  } catch (error) {
    throw new ProtocolError(`Bedrock sent a chunk that is not {"bytes": base64 JSON event}: ${describeError(error)}`);
  }
}
