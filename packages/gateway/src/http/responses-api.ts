/**
 * The Responses retrieval API over the response store: `GET /v1/responses/{id}` (JSON, or its events replayed with
 * `stream=true&starting_after=N`), `GET /v1/responses/{id}/input_items`, `DELETE /v1/responses/{id}`,
 * `POST /v1/responses/{id}/cancel`, and `background: true`. Only the credential that created a response reaches it;
 * anyone else is told it does not exist.
 */
import type { GatewayContext } from '../context.js';
import type { StoredItem, StoredResponse } from '../state/responses.js';
import { HttpError, invalid } from './errors.js';
import type { Incoming, Reply } from './incoming.js';
import { ownerOf } from './owner.js';
import { ownedResponse, type StoredTurn } from './resolve.js';

const PATH = /^\/v1\/responses\/([^/]+)(?:\/(input_items|cancel))?$/;

/** A call of the retrieval API. */
export type ResponsesApiCall =
  | { action: 'get' | 'delete' | 'input_items' | 'cancel'; id: string }
  | { action: 'not_allowed'; allow: string; path: string };

/** The retrieval API call a request makes; undefined for any other path. */
export function matchResponsesApi(method: string, path: string): ResponsesApiCall | undefined {
  const match = PATH.exec(path);
  const id = match?.[1];
  if (!match || id === undefined) return undefined;
  const sub = match[2];
  if (sub === 'input_items') return method === 'GET' ? { action: 'input_items', id } : { action: 'not_allowed', allow: 'GET', path };
  if (sub === 'cancel') return method === 'POST' ? { action: 'cancel', id } : { action: 'not_allowed', allow: 'POST', path };
  if (method === 'GET') return { action: 'get', id };
  if (method === 'DELETE') return { action: 'delete', id };
  return { action: 'not_allowed', allow: 'GET, DELETE', path };
}

/**
 * Answers a retrieval API call. `replay(streamId, after)` serves a stored stream from after its message number
 * `after` (route.ts's resumption, with its owner check and stream slot).
 */
export async function serveResponsesApi(
  context: GatewayContext,
  request: Incoming,
  call: ResponsesApiCall,
  replay: (streamId: string, after: number) => Promise<Reply>,
): Promise<Reply> {
  if (call.action === 'not_allowed')
    throw new HttpError(405, invalid(`Use ${call.allow} for ${call.path}`, null, 'method_not_allowed'), { allow: call.allow });
  const record = await ownedResponse(context, call.id, await ownerOf(request));
  switch (call.action) {
    case 'get': {
      if (request.query.get('stream') !== 'true') return { status: 200, headers: {}, body: record.response };
      if (record.streamId === undefined)
        throw new HttpError(
          400,
          invalid(
            `The events of response ${call.id} were not kept: only background and resumable responses stream again`,
            'stream',
            'stream_not_kept',
          ),
        );
      // Message n of the stream is the event with sequence_number n - 1.
      return replay(record.streamId, sequenceParam(request.query.get('starting_after')) + 1);
    }
    case 'input_items':
      return { status: 200, headers: {}, body: inputItems(record.input, request.query) };
    case 'delete':
      await context.responses.delete(call.id);
      return { status: 200, headers: {}, body: { id: call.id, object: 'response', deleted: true } };
    case 'cancel': {
      if (record.response.background !== true)
        throw new HttpError(400, invalid('Only a background response can be cancelled', null, 'not_background'));
      const status = record.response.status;
      if (status !== 'queued' && status !== 'in_progress') return { status: 200, headers: {}, body: record.response };
      const cancelled = await cancelHere(context, call.id);
      if (cancelled) return { status: 200, headers: {}, body: cancelled };
      if (!context.store.requestCancel)
        throw new HttpError(
          409,
          invalid(`Response ${call.id} runs on another gateway instance; send the cancel there`, null, 'cancel_elsewhere'),
        );
      await context.store.requestCancel(call.id);
      return { status: 200, headers: {}, body: await cancelledElsewhere(context, call.id, record) };
    }
  }
}

/**
 * Cancels background response `id` when its generation runs in this process: aborts it, waits for it to end (its
 * failure written), then stores it `cancelled`. Undefined when it does not run here.
 */
async function cancelHere(context: GatewayContext, id: string): Promise<Record<string, unknown> | undefined> {
  const record = await context.responses.get(id);
  if (record?.streamId === undefined || !(await context.generations.cancel(record.streamId, new Error('cancelled'))))
    return undefined;
  const ended = (await context.responses.get(id)) ?? record;
  const cancelled = { ...ended.response, status: 'cancelled', error: null };
  await context.responses.put({ ...ended, response: cancelled });
  return cancelled;
}

/** How long a cancel sent to another instance waits for the store to say `cancelled`. */
const CANCEL_WAIT_MS = 10_000;
const CANCEL_POLL_MS = 25;

/**
 * The response as the store holds it once the instance running it stored it `cancelled`, or once it ended otherwise
 * (it completed before the cancel arrived), or after {@link CANCEL_WAIT_MS} (no instance runs it any more). A
 * `failed` is waited past: an aborted generation writes it just before its instance writes `cancelled`.
 */
async function cancelledElsewhere(context: GatewayContext, id: string, record: StoredResponse): Promise<Record<string, unknown>> {
  const deadline = Date.now() + CANCEL_WAIT_MS;
  let latest = record;
  for (;;) {
    latest = (await context.responses.get(id)) ?? latest;
    const status = latest.response.status;
    if (status === 'cancelled' || status === 'completed' || status === 'incomplete' || Date.now() >= deadline)
      return latest.response;
    await new Promise((resolve) => setTimeout(resolve, CANCEL_POLL_MS));
  }
}

/** The contexts whose instance listens for the cancels other instances send (once each, again after a failure). */
const listening = new WeakMap<GatewayContext, Promise<void>>();

/** Listens for cancels sent through a shared store, before a background response starts on this instance. */
function listenForCancels(context: GatewayContext): Promise<void> {
  const { store } = context;
  if (!store.listenForCancels) return Promise.resolve();
  let heard = listening.get(context);
  if (!heard) {
    heard = store
      .listenForCancels((id) => void cancelHere(context, id).catch(() => undefined))
      .catch((error: unknown) => {
        listening.delete(context);
        throw error;
      });
    listening.set(context, heard);
  }
  return heard;
}

/** `starting_after`: a sequence number (-1, the default, for every event). */
function sequenceParam(value: string | null): number {
  if (value === null) return -1;
  if (!/^\d{1,15}$/.test(value))
    throw new HttpError(400, invalid('starting_after must be a sequence number', 'starting_after', 'invalid_starting_after'));
  return Number(value);
}

/** The list shape of `input_items`: `limit` (1-100, default 20), `order` (`desc` by default), `after` an item id. */
function inputItems(input: readonly StoredItem[], query: URLSearchParams) {
  const limitText = query.get('limit') ?? '20';
  const limit = Number(limitText);
  if (!/^\d{1,3}$/.test(limitText) || limit < 1 || limit > 100)
    throw new HttpError(400, invalid('limit must be between 1 and 100', 'limit', 'invalid_limit'));
  const order = query.get('order') ?? 'desc';
  if (order !== 'asc' && order !== 'desc') throw new HttpError(400, invalid('order must be asc or desc', 'order', 'invalid_order'));
  const ordered = order === 'asc' ? [...input] : [...input].reverse();
  const after = query.get('after');
  const start = after === null ? 0 : ordered.findIndex((item) => item.id === after) + 1;
  if (after !== null && start === 0)
    throw new HttpError(404, invalid(`Item with id '${after}' not found.`, 'after', 'item_not_found'));
  const data = ordered.slice(start, start + limit);
  return {
    object: 'list',
    data,
    first_id: data[0]?.id ?? null,
    last_id: data.at(-1)?.id ?? null,
    has_more: start + limit < ordered.length,
  };
}

/**
 * `background: true`: the generation is started as a resumable stream (it follows its own signal, so it goes on
 * after this request returns, or after its client left). A streamed request reads it from the store; otherwise the
 * answer is the response as it opened, `in_progress`.
 */
export async function runInBackground(
  context: GatewayContext,
  turn: StoredTurn,
  streamed: boolean,
  start: (owner: string) => Promise<Reply>,
): Promise<Reply> {
  // Cancellable from any instance sharing the store: this one hears the cancel before the generation starts.
  await listenForCancels(context);
  const reply = await start(turn.owner);
  if (streamed) return reply;
  // The client reads nothing of it now: the stream's reader is let go, the generation runs on into the store.
  await reply.stream?.[Symbol.asyncIterator]().return?.();
  const opened = turn.opened;
  if (!opened)
    throw new HttpError(500, { message: 'The background response did not open', type: 'server_error', param: null, code: null });
  return { status: 200, headers: reply.headers, body: opened };
}
