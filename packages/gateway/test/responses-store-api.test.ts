/**
 * The Responses retrieval API of the gateway's store, with openai-node: GET (JSON, and the events replayed from
 * `starting_after`), input_items, DELETE, background responses and their cancel, fifty turns each sent the instant
 * the previous `response.completed` arrived, and a full store refusing with the 507 rather than dropping a response.
 */
import { type ListeningGateway, listenGateway, MemoryResponseStore } from '@ai4ts/gateway';
import { type MockModel, type MockRequestBody, type MockTurn, startMockModel } from '@ai4ts/testing';
import { sleep } from '@ai4ts/test-kit';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const server of open.splice(0).reverse()) await server.close();
});

const WHOLE = 'one two three four five six seven eight nine ten';

/** The text of a response's messages. */
function textOf(response: OpenAI.Responses.Response): string {
  return response.output
    .flatMap((item) => (item.type === 'message' ? item.content : []))
    .map((part) => (part.type === 'output_text' ? part.text : ''))
    .join('');
}

/** `slow` answers word by word with a pause before each event (to be cancelled or replayed while running). */
function script(body: MockRequestBody): MockTurn {
  const text = JSON.stringify(body);
  if (text.includes('slow')) return { content: WHOLE, chunkDelayMs: 150 };
  return { content: `turn ${text.split('"turn').length - 1}` };
}

async function setup(options: { responseStore?: MemoryResponseStore } = {}) {
  const model: MockModel = await startMockModel({ script, seed: 5 });
  open.push(model);
  const gateway: ListeningGateway = await listenGateway({
    upstream: model.baseURL,
    upstreamProtocol: 'chat',
    auth: ['sk-one', 'sk-two'],
    upstreamToken: 'sk-upstream-key',
    ...options,
  });
  open.push(gateway);
  const client = (key = 'sk-one') => new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: key, maxRetries: 0 });
  return { model, gateway, client };
}

/** Polls until the response is no longer running (no time is asserted). */
async function settled(openai: OpenAI, id: string): Promise<OpenAI.Responses.Response> {
  for (;;) {
    const response = await openai.responses.retrieve(id);
    if (response.status !== 'in_progress' && response.status !== 'queued') return response;
    await sleep(50);
  }
}

describe('the retrieval API', () => {
  it('GET answers the stored response, input_items lists its input, DELETE removes it', async () => {
    const { client } = await setup();
    const openai = client();
    const first = await openai.responses.create({ model: 'mock-model', input: [{ role: 'user', content: 'Hello', id: 'msg_mine' }] });
    const second = await openai.responses.create({ model: 'mock-model', previous_response_id: first.id, input: 'Again' });
    expect(await openai.responses.retrieve(second.id)).toEqual(second);

    const page = await openai.responses.inputItems.list(second.id, { limit: 2 });
    // Newest first by default: this request's input, then the first response's output.
    expect(page.data.map((item) => item.id)).toEqual([expect.stringMatching(/^msg_/), first.output[0]?.id]);
    const raw = await openai.responses.inputItems.list(second.id, { limit: 2 }).asResponse();
    expect(await raw.json()).toMatchObject({ object: 'list', has_more: true, first_id: page.data[0]?.id, last_id: first.output[0]?.id });
    const rest = await openai.responses.inputItems.list(second.id, { limit: 2, after: first.output[0]?.id ?? '' });
    expect(rest.data.map((item) => item.id)).toEqual(['msg_mine']);

    expect(await openai.responses.delete(second.id)).toEqual({ id: second.id, object: 'response', deleted: true });
    const deleted = await fetch(`${openai.baseURL}/responses/${first.id}`, { method: 'DELETE', headers: { authorization: 'Bearer sk-one' } });
    expect(await deleted.json()).toEqual({ id: first.id, object: 'response', deleted: true });
    await expect(openai.responses.retrieve(second.id)).rejects.toMatchObject({ status: 404, code: 'response_not_found' });
    await expect(openai.responses.create({ model: 'mock-model', previous_response_id: first.id, input: 'More' })).rejects.toMatchObject({
      status: 404,
      code: 'response_not_found',
    });
  });

  it("an item id another credential reuses does not shadow the owner's item", async () => {
    const { client, model } = await setup();
    const mine = await client().responses.create({ model: 'mock-model', input: 'Hello' });
    const itemId = mine.output[0]?.id ?? '';
    // A user message with an id of its own (openai-node's types have none on input messages: sent as JSON).
    const shadow = await fetch(`${client().baseURL}/responses`, {
      method: 'POST',
      headers: { authorization: 'Bearer sk-two', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'mock-model', input: [{ type: 'message', role: 'user', content: 'shadow', id: itemId }] }),
    });
    expect(shadow.status).toBe(200);
    await client().responses.create({ model: 'mock-model', input: [{ type: 'item_reference', id: itemId }, { role: 'user', content: 'Again' }] });
    const sent = JSON.stringify(model.requests.at(-1)?.body);
    expect(sent).toContain('turn 0');
    expect(sent).not.toContain('shadow');
  });

  it('store: false keeps nothing and says so', async () => {
    const { client } = await setup();
    const openai = client();
    const response = await openai.responses.create({ model: 'mock-model', input: 'Hello', store: false });
    expect(response).toMatchObject({ store: false });
    await expect(openai.responses.retrieve(response.id)).rejects.toMatchObject({ status: 404 });
  });

  it('a background response runs on, then replays its events from starting_after', async () => {
    const { client } = await setup();
    const openai = client();
    const started = await openai.responses.create({ model: 'mock-model', input: 'slow please', background: true });
    expect(started).toMatchObject({ status: 'in_progress', background: true, store: true });
    const done = await settled(openai, started.id);
    expect(done.status).toBe('completed');
    expect(textOf(done)).toBe(WHOLE);

    const replay = await openai.responses.retrieve(started.id, { stream: true, starting_after: 2 });
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const event of replay) events.push(event);
    expect(events[0]?.sequence_number).toBe(3);
    expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, index) => index + 3));
    expect(events.at(-1)?.type).toBe('response.completed');
    // Another credential cannot read it, nor replay it.
    await expect(client('sk-two').responses.retrieve(started.id, { stream: true })).rejects.toMatchObject({ status: 404 });
  });

  it('a running background response is replayed live, and cancel stops its upstream call', async () => {
    const { client, model } = await setup();
    const openai = client();
    const started = await openai.responses.create({ model: 'mock-model', input: 'slow please', background: true });
    const replay = await openai.responses.retrieve(started.id, { stream: true });
    const seen: string[] = [];
    for await (const event of replay) {
      seen.push(event.type);
      if (event.type === 'response.output_text.delta') break;
    }
    expect(seen[0]).toBe('response.created');
    await expect(client('sk-two').responses.cancel(started.id)).rejects.toMatchObject({ status: 404 });
    const cancelled = await openai.responses.cancel(started.id);
    expect(cancelled.status).toBe('cancelled');
    expect((await openai.responses.retrieve(started.id)).status).toBe('cancelled');
    // The upstream was asked once, and its answer was cut: the stored text is a part of the whole.
    expect(model.requests.length).toBe(1);
    const text = textOf(cancelled);
    expect(WHOLE.startsWith(text) && text.length < WHOLE.length).toBe(true);
    // Cancelling again answers the response as it is.
    expect((await openai.responses.cancel(started.id)).status).toBe('cancelled');
  });

  it('a streamed response whose client left is stored as failed, never left in_progress', async () => {
    const { client } = await setup();
    const openai = client();
    const stream = await openai.responses.create({ model: 'mock-model', input: 'slow please', stream: true });
    let id = '';
    for await (const event of stream) {
      if (event.type === 'response.created') id = event.response.id;
      if (event.type === 'response.output_text.delta') break;
    }
    const ended = await settled(openai, id);
    expect(ended.status).toBe('failed');
    expect(ended.error).toMatchObject({ code: 'stream_stopped' });
  });

  it('a response that is not a background one cannot be cancelled', async () => {
    const { client } = await setup();
    const response = await client().responses.create({ model: 'mock-model', input: 'Hello' });
    await expect(client().responses.cancel(response.id)).rejects.toMatchObject({ status: 400 });
  });

  it('fifty turns, each sent the instant the previous response.completed arrived, each finds the previous one', async () => {
    const { client, model } = await setup();
    const openai = client();
    let previous: string | undefined;
    for (let turn = 1; turn <= 50; turn++) {
      const stream = await openai.responses.create({
        model: 'mock-model',
        input: `turn ${turn}`,
        stream: true,
        ...(previous && { previous_response_id: previous }),
      });
      for await (const event of stream) if (event.type === 'response.completed') previous = event.response.id;
    }
    // The fiftieth request carried every earlier turn, in order.
    const last = JSON.stringify(model.requests.at(-1)?.body);
    expect(last.split('"turn').length - 1).toBe(50 + 49);
    expect(last.indexOf('turn 1"')).toBeLessThan(last.indexOf('turn 49"'));
  }, 60_000);

  it('a full store refuses a new response with the 507, streamed or not, and drops none', async () => {
    const { client } = await setup({ responseStore: new MemoryResponseStore({ maxResponses: 1 }) });
    const openai = client();
    const kept = await openai.responses.create({ model: 'mock-model', input: 'Hello' });
    await expect(openai.responses.create({ model: 'mock-model', input: 'Hello' })).rejects.toMatchObject({
      status: 507,
      code: 'response_store_full',
    });
    await expect(openai.responses.create({ model: 'mock-model', input: 'Hello', stream: true })).rejects.toMatchObject({ status: 507 });
    expect((await openai.responses.retrieve(kept.id)).id).toBe(kept.id);
    // Not stored, not refused.
    expect((await openai.responses.create({ model: 'mock-model', input: 'Hello', store: false })).status).toBe('completed');
  });
});

describe("a route with state: 'upstream'", () => {
  it('passes previous_response_id and item_reference to a Responses upstream unchanged, and stores nothing', async () => {
    const model = await startMockModel({ script, seed: 5 });
    open.push(model);
    const gateway = await listenGateway({
      routes: [{ model: '*', upstream: model.baseURL, protocol: 'responses', state: 'upstream', upstreamToken: 'sk-upstream-key' }],
      auth: 'sk-one',
    });
    open.push(gateway);
    const openai = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'sk-one', maxRetries: 0 });
    const first = await openai.responses.create({ model: 'mock-model', input: 'turn one' });
    const second = await openai.responses.create({
      model: 'mock-model',
      previous_response_id: first.id,
      input: [{ type: 'item_reference', id: first.output[0]?.id ?? '' }, { role: 'user', content: 'turn two' }],
      stream: true,
    });
    let completed: OpenAI.Responses.Response | undefined;
    for await (const event of second) if (event.type === 'response.completed') completed = event.response;
    // The upstream's own ids came back, and the upstream received the references as the client sent them.
    expect(model.requests[1]?.body).toMatchObject({
      previous_response_id: first.id,
      input: [{ type: 'item_reference', id: first.output[0]?.id }, { role: 'user', content: 'turn two' }],
      stream: true,
    });
    expect(completed?.previous_response_id).toBe(first.id);
    // The gateway kept nothing of it.
    await expect(openai.responses.retrieve(first.id)).rejects.toMatchObject({ status: 404 });
  });

  it('is refused at the start for an upstream that is not a Responses one', async () => {
    await expect(
      listenGateway({ routes: [{ model: '*', upstream: 'http://127.0.0.1:9/v1', protocol: 'chat', state: 'upstream' }] }),
    ).rejects.toThrow("state: 'upstream' needs a Responses upstream");
  });
});
