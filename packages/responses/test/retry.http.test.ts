/**
 * Stream execution over real sockets on 127.0.0.1: a Responses stream whose first event is a retryable `error`
 * (`server_error`) is sent again; one that failed after response.created is not.
 */
import { ApiError, Transport } from '@ai4ts/core';
import { ResponsesStreamListener, streamResponse } from '@ai4ts/responses';
import { afterEach, describe, expect, it } from 'vitest';
import { serve, sseText, startSse, type TestServer } from '@ai4ts/test-kit';
import { messageItem, Script, textScript } from './fixtures.js';

let server: TestServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

const request = { model: 'gpt-test', input: 'hi' };
const serverError = { type: 'error', code: 'server_error', message: 'try again', param: null, sequence_number: 0 };

/** Request 1 gets `first` (SSE text), every later one the whole text answer. */
async function failingOnce(first: string): Promise<Transport> {
  server = await serve((_req, res, n) => {
    startSse(res);
    res.end(n === 1 ? first : sseText(textScript().events, { named: true }));
  });
  return new Transport({ baseURL: server.baseURL, apiKey: 'sk-local', backoff: { initialMs: 1 } });
}

describe('Responses stream retries before the first event', () => {
  it('a server_error first event is sent again', async () => {
    const transport = await failingOnce(sseText([serverError], { named: true }));
    const stream = streamResponse(transport, request);
    const retries: unknown[] = [];
    stream.on('retry', (event) => retries.push(event));
    const response = await stream.final();
    expect(response.output_text).toBe('Paris is the capital of France — café ☕');
    expect(server?.requests).toBe(2);
    expect(retries).toEqual([{ type: 'retry', attempt: 1, error: expect.any(ApiError), delayMs: expect.any(Number) }]);
    expect(stream.listener.events).toEqual(textScript().events);
  });

  it('never after response.created: the error keeps its partial', async () => {
    const started = new Script().start().events;
    const transport = await failingOnce(sseText([...started, { ...serverError, sequence_number: 2 }], { named: true }));
    const error: unknown = await streamResponse(transport, request).final().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ code: 'server_error', partial: { id: 'resp_1' } });
    expect(server?.requests).toBe(1);
  });
});

describe('ResponsesStreamListener.reset', () => {
  it('makes a used listener read like a new one, its handlers kept', () => {
    const used = new ResponsesStreamListener();
    let finishes = 0;
    used.on('finish', () => finishes++);
    for (const event of textScript().events) used.push(event);
    used.reset();
    const fresh = new ResponsesStreamListener();
    const next = new Script().start().message(0, 'msg_2', ['two']).completed([messageItem('msg_2', 'two')]).events;
    for (const listener of [used, fresh]) {
      expect(listener.status).toBe('pending');
      for (const event of next) listener.push(event);
    }
    expect(used.end()).toEqual(fresh.end());
    expect(used.events).toEqual(fresh.events);
    expect(used.lastSequenceNumber).toBe(fresh.lastSequenceNumber);
    expect(finishes).toBe(2);
  });
});
