import {
  AbortError,
  type Ai4tsError,
  ApiError,
  AuthenticationError,
  collectInto,
  ConnectionError,
  defineTool,
  isLoopRequest,
  ProtocolError,
  StreamIncompleteError,
  type StreamListener,
  type ListenerStatus,
} from '@ai4ts/core';
import { LOOP_FIELDS, loopOptionsOf, readCreated, readErrorResponse, toAi4tsError, toWireBody } from '@ai4ts/core/internal';
import { SseError, type SseEvent } from '@ai4ts/sse';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';

const tool = defineTool({ name: 'add', parameters: z.object({ a: z.number() }), execute: ({ a }) => a + 1 });
const wire = (t: { name: string }) => ({ type: 'function', name: t.name });

describe('the loop-request rule', () => {
  it('a request runs the loop with a defineTool tool or any loop field, not with wire tools alone', () => {
    expect(isLoopRequest({ tools: [tool] })).toBe(true);
    expect(isLoopRequest({ tools: [{ type: 'function', function: { name: 'x' } }] })).toBe(false);
    expect(isLoopRequest({ tools: [] })).toBe(false);
    expect(isLoopRequest({})).toBe(false);
    for (const field of LOOP_FIELDS) expect(isLoopRequest({ [field]: field === 'maxSteps' ? 3 : () => {} })).toBe(true);
  });

  it('toWireBody leaves off every loop field, undefined values and an empty tools array; converts defineTool tools', () => {
    const request = {
      model: 'm',
      messages: [],
      tools: [tool, { type: 'function', name: 'native' }],
      maxSteps: 3,
      passThroughToolCalls: false,
      concurrency: 2,
      onStepFinish: () => {},
      onToolCall: () => undefined,
      prepareStep: () => undefined,
      temperature: undefined,
      vendor_field: { keep: true },
    };
    const before = structuredClone({ ...request, tools: undefined, onStepFinish: 0, onToolCall: 0, prepareStep: 0 });
    expect(toWireBody(request, wire)).toEqual({
      model: 'm',
      messages: [],
      tools: [
        { type: 'function', name: 'add' },
        { type: 'function', name: 'native' },
      ],
      vendor_field: { keep: true },
    });
    expect({ ...request, tools: undefined, onStepFinish: 0, onToolCall: 0, prepareStep: 0 }).toEqual(before);
    expect(toWireBody({ model: 'm', tools: [] }, wire)).toEqual({ model: 'm' });
  });

  it('loopOptionsOf reads the settings from the request and takes the caller’s signal', () => {
    const signal = new AbortController().signal;
    const onStepFinish = () => {};
    expect(loopOptionsOf({ tools: [tool, { type: 'x' }], maxSteps: 2, onStepFinish }, signal)).toEqual({
      tools: [tool],
      maxSteps: 2,
      onStepFinish,
      signal,
    });
  });
});

describe('toAi4tsError', () => {
  it('keeps ours, lets an abort win, maps SSE errors to ProtocolError and the rest to ConnectionError', () => {
    const ours = new ApiError('x');
    expect(toAi4tsError(ours)).toBe(ours);
    const controller = new AbortController();
    controller.abort('why');
    const aborted = toAi4tsError(new TypeError('terminated'), { signal: controller.signal, partial: 'so far' });
    expect(aborted).toBeInstanceOf(AbortError);
    expect(aborted.cause).toBe('why');
    expect(aborted.partial).toBe('so far');
    expect(toAi4tsError(new SseError('too big', { code: 'event_too_large' }))).toBeInstanceOf(ProtocolError);
    const broken = toAi4tsError(new TypeError('terminated', { cause: new Error('other side closed') }));
    expect(broken).toBeInstanceOf(ConnectionError);
    expect(broken.message).toContain('terminated: other side closed');
  });

  it('gives an Ai4tsError without a partial the one it is given, and never replaces one', () => {
    expect(toAi4tsError(new ApiError('x'), { partial: 1 }).partial).toBe(1);
    expect(toAi4tsError(new ApiError('x', { partial: 2 }), { partial: 1 }).partial).toBe(2);
  });
});

describe('readErrorResponse', () => {
  it('builds the status’s ApiError with every secret redacted from the echoed body', async () => {
    const body = JSON.stringify({ error: { message: 'Incorrect API key provided: sk-secret-123', code: 'invalid_api_key' } });
    const response = new Response(body, { status: 401, headers: { 'x-echo': 'Bearer sk-secret-123', 'x-request-id': 'r1' } });
    const error = await readErrorResponse(response, { secrets: ['sk-secret-123', undefined] });
    expect((error as ApiError).headers?.get('x-echo')).toBe('Bearer [redacted]');
    expect((error as ApiError).requestId).toBe('r1');
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(error.message).toBe('401 Incorrect API key provided: [redacted]');
    expect(JSON.stringify((error as ApiError).body)).not.toContain('sk-secret-123');
  });
});

/** A listener of numbers: `data: N` adds N, `data: end` completes, `data: bad` is bad data. */
class SumListener implements StreamListener<number> {
  status: ListenerStatus = 'pending';
  error: Ai4tsError | undefined;
  sum = 0;
  pushSse(event: SseEvent): void {
    if (this.status === 'completed' || this.status === 'failed') return;
    if (event.data === 'end') {
      this.status = 'completed';
      return;
    }
    if (event.data === 'bad') throw this.fail(new ProtocolError('bad', { line: event.data }));
    this.status = 'streaming';
    this.sum += Number(event.data);
  }
  end(): number {
    if (this.status === 'completed') return this.sum;
    throw this.error ?? this.fail(new StreamIncompleteError('no end'));
  }
  fail(error: unknown): Ai4tsError {
    if (this.error) return this.error;
    this.error = toAi4tsError(error, { partial: this.sum });
    this.status = 'failed';
    return this.error;
  }
  reset(): void {
    this.status = 'pending';
    this.error = undefined;
    this.sum = 0;
  }
}

describe('collectInto', () => {
  const text = 'data: 1\n\ndata: 2\n\ndata: end\n\ndata: 100\n\n';
  const bytes = new TextEncoder().encode(text);
  const forms = {
    string: () => text,
    response: () => new Response(text),
    bytes: () => new Blob([bytes]).stream(),
    strings: () =>
      (async function* () {
        for (const char of text) yield char;
      })(),
  };

  for (const [name, make] of Object.entries(forms)) {
    it(`reads a ${name} to the same result, stopping at the listener's end`, async () => {
      await expect(collectInto(make(), new SumListener())).resolves.toBe(3);
    });
  }

  it('a cut-off keeps the partial; bad data fails with the listener’s error', async () => {
    const cut = await collectInto('data: 1\n\ndata: 2\n\n', new SumListener()).catch((e: unknown) => e);
    expect(cut).toBeInstanceOf(StreamIncompleteError);
    expect((cut as StreamIncompleteError).partial).toBe(3);
    const bad = await collectInto('data: 5\n\ndata: bad\n\n', new SumListener()).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(ProtocolError);
    expect((bad as ProtocolError).partial).toBe(5);
  });

  it('a Response with an error status is its typed ApiError, recorded by the listener', async () => {
    const listener = new SumListener();
    const error = await collectInto(new Response('{"error":{"message":"slow down"}}', { status: 429 }), listener).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(429);
    expect(listener.error).toBe(error);
  });

  it('a source that breaks is a ConnectionError with the partial', async () => {
    const source = (async function* () {
      yield 'data: 4\n\n';
      throw new TypeError('terminated');
    })();
    const error = await collectInto(source, new SumListener()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectionError);
    expect((error as ConnectionError).partial).toBe(4);
  });
});

describe('readCreated', () => {
  const reader = { listener: () => new SumListener(), parse: (json: unknown) => Number(json) };
  it('parses JSON, collects SSE, raises a 200 {error} body and a body that is not JSON', async () => {
    await expect(readCreated(new Response('41'), reader)).resolves.toBe(41);
    const sse = new Response('data: 2\n\ndata: end\n\n', { headers: { 'content-type': 'text/event-stream' } });
    await expect(readCreated(sse, reader)).resolves.toBe(2);
    await expect(readCreated(new Response('{"error":{"message":"nope"}}'), reader)).rejects.toBeInstanceOf(ApiError);
    await expect(readCreated(new Response('<html>'), reader)).rejects.toBeInstanceOf(ProtocolError);
  });
});
