/**
 * Stateful Responses through the gateway: a request's `previous_response_id` and `item_reference` items resolved from
 * the response store into the whole conversation BEFORE translation (so that every upstream protocol receives it),
 * and the answer written to the store before its `response.completed` reaches the client (so that a next turn sent
 * the instant it arrived finds it, on any instance sharing the store).
 */
import { isRecord } from '@ai4ts/core/internal';
import type { SseMessage } from '@ai4ts/sse';
import { badRequest } from '../codecs/bad-request.js';
import { newId, type ProtocolCodec } from '../codecs/neutral.js';
import type { GatewayContext } from '../context.js';
import { itemNotFound, responseNotFound, type StoredItem, type StoredResponse } from '../state/responses.js';
import { storeFailed } from '../state/store.js';
import { HttpError } from './errors.js';

/** The events that carry the whole response object, and the terminal ones among them. */
const TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.failed']);
const WITH_RESPONSE = new Set(['response.created', 'response.in_progress', ...TERMINAL]);

/** The id prefix OpenAI gives an input item of each type. */
function idPrefix(type: unknown): string {
  if (type === 'function_call') return 'fc';
  if (type === 'function_call_output') return 'fco';
  if (type === 'reasoning') return 'rs';
  return 'msg';
}

/** An input item with its id: the client's, else a new one. */
function withId(item: Record<string, unknown>): StoredItem {
  const id = typeof item.id === 'string' && item.id !== '' ? item.id : newId(idPrefix(item.type ?? 'message'));
  return { ...item, id };
}

/** The output items of a stored response. */
export function outputOf(record: StoredResponse): StoredItem[] {
  const output = Array.isArray(record.response.output) ? record.response.output : [];
  return output.filter((item): item is StoredItem => isRecord(item) && typeof item.id === 'string');
}

/** A stored response of `owner`: anyone else's is answered as unknown (whether it exists is not told either). */
export async function ownedResponse(context: GatewayContext, id: string, owner: string): Promise<StoredResponse> {
  const record = await context.responses.get(id);
  if (!record || record.owner !== owner) throw responseNotFound(id);
  return record;
}

/**
 * A Responses request that the gateway keeps: its body resolved (the conversation in `input`, no
 * `previous_response_id`, no `item_reference`), and how its answer is written to the store.
 */
export class StoredTurn {
  readonly owner: string;
  /** The body the codec reads: every reference resolved. */
  readonly body: Record<string, unknown>;
  /** The items the answer is generated from, each with its id. */
  readonly input: StoredItem[];
  readonly background: boolean;
  readonly #context: GatewayContext;
  /** The `previous_response_id` the request named, echoed in its response. */
  readonly previous: string | null;
  /** The response's id once its first event was written (or its object built). */
  id: string | undefined;
  /** The response object as it opened (streamed answers): what a background request answers. */
  opened: Record<string, unknown> | undefined;
  /** The stream store's id of its events, when they are kept there. */
  streamId: string | undefined;

  private constructor(context: GatewayContext, owner: string, body: Record<string, unknown>, input: StoredItem[]) {
    this.#context = context;
    this.owner = owner;
    this.input = input;
    this.background = body.background === true;
    this.previous = typeof body.previous_response_id === 'string' ? body.previous_response_id : null;
    const { previous_response_id: _previous, background: _background, ...rest } = body;
    this.body = { ...rest, input };
  }

  /**
   * Resolves a Responses request body for `owner`; undefined when it asks not to be stored (`store: false`) and
   * refers to nothing stored. An unknown reference is the 404 `response_not_found` / `item_not_found`.
   */
  static async of(context: GatewayContext, owner: string, json: unknown): Promise<StoredTurn | undefined> {
    if (!isRecord(json)) return undefined;
    const previous = json.previous_response_id;
    const items = typeof json.input === 'string' ? [{ type: 'message', role: 'user', content: json.input }] : json.input;
    if (!Array.isArray(items)) return undefined;
    const referenced = items.some((item) => isRecord(item) && item.type === 'item_reference');
    if (json.background === true && json.store === false)
      throw badRequest('background needs store: true', 'background');
    if (json.store === false && typeof previous !== 'string' && !referenced) return undefined;
    const input: StoredItem[] = [];
    if (typeof previous === 'string') {
      const record = await ownedResponse(context, previous, owner);
      input.push(...record.input, ...outputOf(record));
    }
    for (const item of items) {
      if (!isRecord(item)) throw badRequest('Each input item must be an object', 'input');
      if (item.type === 'item_reference') input.push(await referencedItem(context, owner, item.id));
      else input.push(withId(item));
    }
    return new StoredTurn(context, owner, json, input);
  }

  /** Whether the answer is written to the store (not when the request said `store: false`). */
  get stored(): boolean {
    return this.body.store !== false;
  }

  /** Writes a (non-streamed) response object, then gives it back as the client receives it: `store: true`. */
  async keep(response: unknown): Promise<unknown> {
    if (!this.stored || !isRecord(response)) return response;
    const kept: Record<string, unknown> = { ...response, ...this.#fields() };
    if (typeof kept.id === 'string') {
      this.id = kept.id;
      await this.#put(kept);
    }
    return kept;
  }

  /**
   * The streamed answer with each response object saying `store: true`, the response written when it opens and
   * again before its terminal event goes on: a write that fails ends the stream with the protocol's error instead. A
   * stream that stops before its end (its client left) is written as `failed`, never left `in_progress`.
   */
  async *stream(codec: ProtocolCodec, messages: AsyncIterable<SseMessage>): AsyncGenerator<SseMessage> {
    if (!this.stored) return yield* messages;
    let ended = false;
    try {
      for await (const message of messages) {
        const carries = message.event !== undefined && WITH_RESPONSE.has(message.event);
        const payload: unknown = carries ? JSON.parse(message.data) : undefined;
        if (message.event === undefined || !isRecord(payload) || !isRecord(payload.response)) {
          yield message;
          continue;
        }
        const response: Record<string, unknown> = { ...payload.response, ...this.#fields() };
        if (typeof response.id === 'string') this.id = response.id;
        const opens = message.event === 'response.created';
        ended = TERMINAL.has(message.event);
        // Written when it opens (GET sees it running) and before its end reaches the client.
        if (opens || ended)
          try {
            await this.#put(response);
          } catch (error) {
            ended = true;
            if (opens) throw error;
            const failure = error instanceof HttpError ? error.error : storeFailed('failed').error;
            yield codec.streamError(failure);
            return;
          }
        if (opens) this.opened = response;
        yield { ...message, data: JSON.stringify({ ...payload, response }) };
      }
    } finally {
      if (!ended && this.opened) {
        const error = { code: 'stream_stopped', message: 'The answer stopped before it completed' };
        await this.#put({ ...this.opened, status: 'failed', error }).catch(() => undefined);
      }
    }
  }

  /** What the gateway's response objects say of a stored response. */
  #fields() {
    return { store: true, background: this.background, previous_response_id: this.previous };
  }

  async #put(response: Record<string, unknown>): Promise<void> {
    const id = this.id;
    if (id === undefined) return;
    await this.#context.responses.put({ id, owner: this.owner, response, input: this.input, streamId: this.streamId });
  }
}

/** The item an `item_reference` names, from any response of `owner`. */
async function referencedItem(context: GatewayContext, owner: string, id: unknown): Promise<StoredItem> {
  if (typeof id !== 'string' || id === '') throw itemNotFound(String(id));
  const holder = await context.responses.itemHolder(owner, id);
  if (!holder || holder.owner !== owner) throw itemNotFound(id);
  const item = [...holder.input, ...outputOf(holder)].find((candidate) => candidate.id === id);
  if (!item) throw itemNotFound(id);
  return item;
}
