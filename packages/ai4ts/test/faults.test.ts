/**
 * The fault suite: one systematic run per protocol over real node:http sockets on 127.0.0.1. The server replays
 * each protocol's recorded stream (see protocols.ts) and breaks it on purpose: truncated at every event boundary
 * and inside every event, stalled in each phase, an error frame after HTTP 200, retryable statuses before the first
 * byte and the same failures after output began, connection resets, a 64 MiB line, an abort in every phase, and a
 * tool loop aborted while its tool runs. Every check asserts the typed error, `partial` (absent exactly when nothing
 * arrived, else holding the text that did), and that every socket closed.
 */
import type { ServerResponse } from 'node:http';
import {
  AbortError,
  Ai4ts,
  type Ai4tsOptions,
  ApiError,
  ConnectionError,
  defineTool,
  ProtocolError,
  type RequestOptions,
  StreamIncompleteError,
  TimeoutError,
} from 'ai4ts';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { serve, type TestServer } from '@ai4ts/test-kit';
import { PROTOCOLS, type Protocol, type ProtocolName, type Recording, record, TURNS, textOf } from './protocols.js';

let recorded: Record<'text' | 'tools', Record<ProtocolName, Recording>>;

beforeAll(async () => {
  recorded = { text: await record(TURNS.text), tools: await record(TURNS.tools) };
});

let server: TestServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

type Handler = (res: ServerResponse, n: number) => void;

/**
 * A server whose request `n` gets `handler(res, n)`: HTTP/1.1 with chunked bodies like a provider's, so a reset is
 * told apart from an end. Its keep-alive is short, so the client closes each connection once its answer is done:
 * one still open after a failure is held by the client.
 */
async function start(handler: Handler): Promise<TestServer> {
  server = await serve((_req, res, n) => handler(res, n), { keepAliveTimeoutMs: 100 });
  return server;
}

function client(options: Ai4tsOptions = {}): Ai4ts {
  if (!server) throw new Error('start the server first');
  return new Ai4ts({
    provider: 'openai-compatible',
    baseURL: server.baseURL,
    apiKey: 'sk-faults-0123456789',
    backoff: { initialMs: 1, maxMs: 1 },
    ...options,
  });
}

function sseHead(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  res.flushHeaders();
}

/** The whole recorded stream. */
function replay(res: ServerResponse, blocks: Recording): void {
  sseHead(res);
  res.end(blocks.join(''));
}

/** An HTTP error answer in the usual JSON shape. */
function status(res: ServerResponse, code: number, headers: Record<string, string> = {}): void {
  res.writeHead(code, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify({ error: { message: `status ${code}`, type: 'server_error' } }));
}

interface Outcome {
  result: unknown;
  error: unknown;
  retries: { attempt: number; error: unknown; delayMs: number }[];
}

/** Runs a protocol's stream to its end, recording its `retry` events. */
async function settle(
  protocol: Protocol,
  ai: Ai4ts,
  act?: (stream: ReturnType<Protocol['stream']>) => void,
  options?: RequestOptions,
): Promise<Outcome> {
  const stream = protocol.stream(ai, options);
  const retries: Outcome['retries'] = [];
  stream.on('retry', (event) => retries.push(event));
  act?.(stream);
  return stream.final().then(
    (result) => ({ result, error: undefined, retries }),
    (error: unknown) => ({ result: undefined, error, retries }),
  );
}

/** The error is `type`, and its `partial` holds exactly `text` (none when `text` is undefined: nothing arrived). */
function expectFailure(
  protocol: Protocol,
  outcome: Outcome,
  type: abstract new (...args: never[]) => Error,
  text: string | undefined,
  where = '',
): void {
  expect(outcome.error, where).toBeInstanceOf(type);
  const partial = outcome.error instanceof Error ? Reflect.get(outcome.error, 'partial') : undefined;
  if (text === undefined) expect(partial, where).toBeUndefined();
  else expect(protocol.text(partial), where).toBe(text);
}

/** Waits `ms`. */
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each(PROTOCOLS)('faults over real sockets: $name', (protocol) => {
  const blocks = () => recorded.text[protocol.name];
  /** How many blocks make "output began": up to and including the first with answer text. */
  const began = () => blocks().findIndex((block) => textOf(protocol, [block]) !== '') + 1;
  const whole = () => textOf(protocol, blocks());
  /** The events up to and including the first with answer text, as the server writes them. */
  const output = () => blocks().slice(0, began()).join('');

  /** Failed after output began: `type`, the text that arrived as `partial`, and never sent again. */
  function expectAfterOutput(outcome: Outcome, type: abstract new (...args: never[]) => Error): void {
    expectFailure(protocol, outcome, type, textOf(protocol, blocks(), began()));
    expect(outcome.retries).toEqual([]);
    expect(server?.requests).toBe(1);
  }

  it('the recorded stream itself completes with its whole text (the baseline every fault breaks)', async () => {
    await start((res) => replay(res, blocks()));
    const outcome = await settle(protocol, client());
    expect(outcome.error).toBeUndefined();
    expect(protocol.text(outcome.result)).toBe(whole());
    expect(began()).toBeGreaterThan(0);
    await server?.socketsClosed();
  });

  describe('truncation', () => {
    /** A stream cut after `cut` whole events fails with what they carried: only the whole recording completes. */
    function expectCut(outcome: Outcome, cut: number, where: string): void {
      if (cut >= blocks().length) {
        expect(outcome.error, where).toBeUndefined();
        expect(protocol.text(outcome.result), where).toBe(whole());
        return;
      }
      expectFailure(protocol, outcome, StreamIncompleteError, cut === 0 ? undefined : textOf(protocol, blocks(), cut), where);
    }

    it('at every event boundary: StreamIncompleteError, partial = the text of the events before the cut', async () => {
      for (let cut = 0; cut < blocks().length; cut++) {
        await start((res) => {
          sseHead(res);
          res.end(blocks().slice(0, cut).join(''));
        });
        const outcome = await settle(protocol, client({ maxRetries: 0 }));
        const where = `cut after ${cut} of ${blocks().length} events, before ${blocks()[cut]}`;
        expectCut(outcome, cut, where);
        await server?.socketsClosed();
        await server?.close();
      }
    });

    it('inside every event (cut at its middle byte): the cut event is dropped, what came before is kept', async () => {
      for (let cut = 0; cut < blocks().length; cut++) {
        const block = blocks()[cut] ?? '';
        const head = Buffer.from(block).subarray(0, Math.floor(Buffer.byteLength(block) / 2));
        await start((res) => {
          sseHead(res);
          res.write(blocks().slice(0, cut).join(''));
          res.end(head);
        });
        const outcome = await settle(protocol, client({ maxRetries: 0 }));
        const where = `cut inside event ${cut} of ${blocks().length}: ${head}`;
        expectCut(outcome, cut, where);
        await server?.socketsClosed();
        await server?.close();
      }
    });

    it('a truncated stream is never retried once output began, even with retries left', async () => {
      await start((res) => {
        sseHead(res);
        res.end(output());
      });
      const outcome = await settle(protocol, client({ maxRetries: 3 }));
      expectAfterOutput(outcome, StreamIncompleteError);
    });
  });

  describe('stalls: each timeout names its phase', () => {
    it('before the headers: TimeoutError phase headers, nothing partial, socket closed', async () => {
      await start(() => undefined);
      const outcome = await settle(protocol, client({ timeout: 150, maxRetries: 0 }));
      expectFailure(protocol, outcome, TimeoutError, undefined);
      expect(outcome.error).toMatchObject({ phase: 'headers', message: expect.stringContaining('response headers') });
      await server?.socketsClosed();
    });

    it('before the first event: TimeoutError phase first_token, retried within the budget, sockets closed', async () => {
      await start(sseHead);
      const outcome = await settle(protocol, client({ firstTokenTimeout: 100, maxRetries: 1 }));
      expectFailure(protocol, outcome, TimeoutError, undefined);
      expect(outcome.error).toMatchObject({ phase: 'first_token', message: expect.stringContaining('first') });
      expect(outcome.retries).toHaveLength(1);
      expect(server?.requests).toBe(2);
      await server?.socketsClosed();
    });

    it('between events: TimeoutError phase idle with the text so far, never retried', async () => {
      await start((res) => {
        sseHead(res);
        res.write(output());
      });
      const outcome = await settle(protocol, client({ idleTimeout: 150, maxRetries: 2 }));
      expectAfterOutput(outcome, TimeoutError);
      expect(outcome.error).toMatchObject({ phase: 'idle' });
      await server?.socketsClosed();
    });
  });

  describe("HTTP 200 then an error frame in the protocol's shape", () => {
    it('after output began: ApiError with the provider code and the text so far, never retried', async () => {
      await start((res) => {
        sseHead(res);
        res.end(output() + protocol.errorFrame('server_error', 'boom'));
      });
      const outcome = await settle(protocol, client({ maxRetries: 2 }));
      expectAfterOutput(outcome, ApiError);
      expect(outcome.error).toMatchObject({ code: 'server_error', status: undefined, message: expect.stringContaining('boom') });
    });

    it('as the first event, retryable: sent again, and the second answer is the result', async () => {
      await start((res, n) => {
        if (n > 1) return replay(res, blocks());
        sseHead(res);
        res.end(protocol.errorFrame('server_error', 'try again'));
      });
      const outcome = await settle(protocol, client({ maxRetries: 2 }));
      expect(protocol.text(outcome.result)).toBe(whole());
      expect(outcome.retries).toHaveLength(1);
      expect(outcome.retries[0]?.error).toBeInstanceOf(ApiError);
      expect(server?.requests).toBe(2);
    });

    it('as the first event, not retryable (invalid_request_error): fails at once', async () => {
      await start((res) => {
        sseHead(res);
        res.end(protocol.errorFrame('invalid_request_error', 'bad'));
      });
      const outcome = await settle(protocol, client({ maxRetries: 2 }));
      expectFailure(protocol, outcome, ApiError, undefined);
      expect(server?.requests).toBe(1);
    });
  });

  describe.each([408, 409, 429, 500, 503])('status %i', (code) => {
    it('before the first byte, with Retry-After: 0: retried, reported with its status and wait', async () => {
      await start((res, n) => (n === 1 ? status(res, code, { 'retry-after': '0' }) : replay(res, blocks())));
      const outcome = await settle(protocol, client({ maxRetries: 2 }));
      expect(protocol.text(outcome.result)).toBe(whole());
      expect(outcome.retries).toEqual([{ type: 'retry', attempt: 1, error: expect.objectContaining({ status: code }), delayMs: 0 }]);
      expect(server?.requests).toBe(2);
      await server?.socketsClosed();
    });

    it('before the first byte, every time: bounded, maxRetries + 1 requests, then the typed error', async () => {
      await start((res) => status(res, code, { 'retry-after-ms': '5' }));
      const outcome = await settle(protocol, client({ maxRetries: 2 }));
      expectFailure(protocol, outcome, ApiError, undefined);
      expect(outcome.error).toMatchObject({ status: code });
      expect(outcome.retries.map((retry) => [retry.attempt, retry.delayMs])).toEqual([
        [1, 5],
        [2, 5],
      ]);
      expect(server?.requests).toBe(3);
      await server?.socketsClosed();
    });

    it('after output began (an in-stream error coded with the status): never retried, partial kept', async () => {
      await start((res) => {
        sseHead(res);
        res.end(output() + protocol.errorFrame(String(code), `status ${code}`));
      });
      const outcome = await settle(protocol, client({ maxRetries: 2 }));
      expectAfterOutput(outcome, ApiError);
    });
  });

  describe('every retry is reported, whatever failed', () => {
    it('create: a retry before the headers calls onRetry with the status error, its number and its wait', async () => {
      await start((res, n) => (n === 1 ? status(res, 503, { 'retry-after-ms': '3' }) : replay(res, blocks())));
      const seen: unknown[] = [];
      const result = await protocol.create(client({ onRetry: (error, attempt, delayMs) => seen.push([error, attempt, delayMs]) }));
      expect(protocol.text(result)).toBe(whole());
      expect(seen).toEqual([[expect.objectContaining({ status: 503 }), 1, 3]]);
    });

    it("a tool loop re-emits its step's retry, tagged with the step", async () => {
      await start((res, n) => (n === 1 ? status(res, 429, { 'retry-after': '0' }) : replay(res, blocks())));
      const lookup = defineTool({ name: 'lookup', parameters: z.object({}), execute: () => 'unused' });
      const loop = protocol.loop(client({ maxRetries: 1 }), [lookup]);
      const retries: unknown[] = [];
      loop.on('retry', (event) => retries.push(event));
      const events: string[] = [];
      for await (const event of loop) events.push(event.type);
      expect(retries).toEqual([{ type: 'retry', step: 1, attempt: 1, delayMs: 0, error: expect.objectContaining({ status: 429 }) }]);
      expect(events.slice(0, 2)).toEqual(['step.start', 'retry']);
      expect(server?.requests).toBe(2);
    });
  });

  it('a Retry-After longer than the cap (60 s) is not waited for: the error at once', async () => {
    await start((res) => status(res, 503, { 'retry-after': '120' }));
    const outcome = await settle(protocol, client({ maxRetries: 2 }));
    expectFailure(protocol, outcome, ApiError, undefined);
    expect(outcome.retries).toEqual([]);
    expect(server?.requests).toBe(1);
  });

  describe('connection reset', () => {
    it('before the headers, every time: ConnectionError after maxRetries + 1 attempts', async () => {
      await start((res) => res.socket?.destroy());
      const outcome = await settle(protocol, client({ maxRetries: 2 }));
      expectFailure(protocol, outcome, ConnectionError, undefined);
      expect(outcome.retries).toHaveLength(2);
      expect(server?.requests).toBe(3);
      await server?.socketsClosed();
    });

    it('after the headers, before any event: retried, the second answer is the result', async () => {
      await start((res, n) => {
        if (n > 1) return replay(res, blocks());
        sseHead(res);
        setTimeout(() => res.destroy(), 20);
      });
      const outcome = await settle(protocol, client({ maxRetries: 2 }));
      expect(protocol.text(outcome.result)).toBe(whole());
      expect(outcome.retries[0]?.error).toBeInstanceOf(ConnectionError);
      expect(server?.requests).toBe(2);
    });

    it('after output began: ConnectionError with the text so far, never retried', async () => {
      await start((res) => {
        sseHead(res);
        res.write(output());
        setTimeout(() => res.destroy(), 30);
      });
      const outcome = await settle(protocol, client({ maxRetries: 2 }));
      expectAfterOutput(outcome, ConnectionError);
      await server?.socketsClosed();
    });
  });

  it('a 64 MiB line: ProtocolError at the event size limit, the text before kept, the server cut off early', async () => {
    const MiB = 1024 * 1024;
    const piece = Buffer.alloc(MiB, 'x');
    let written = 0;
    let closed = false;
    await start((res) => {
      sseHead(res);
      res.write(`${output()}data: `);
      res.once('close', () => {
        closed = true;
      });
      const pump = () => {
        while (!closed && written < 64 * MiB) {
          written += MiB;
          if (!res.write(piece)) return void res.once('drain', pump);
        }
        if (!closed) res.end('\n\n');
      };
      pump();
    });
    const outcome = await settle(protocol, client({ maxRetries: 2 }));
    expectAfterOutput(outcome, ProtocolError);
    expect(String(outcome.error)).toContain('maxEventSize');
    await server?.socketsClosed();
    // The client cancelled the body: the server never got to write the whole line.
    expect(written).toBeLessThan(64 * MiB);
  });

  describe('an abort at every phase: AbortError, partial as far as it got, every socket closed', () => {
    type Phase = { name: string; handler: Handler; when: (stream: ReturnType<Protocol['stream']>) => Promise<unknown>; text: () => string | undefined };
    /** Resolves when the server has received its first request. */
    let received: Promise<void>;
    let arrived: () => void;
    const phases: Phase[] = [
      { name: 'before the headers', handler: () => arrived(), when: () => received.then(() => pause(30)), text: () => undefined },
      {
        name: 'after the headers, before the first event',
        handler: (res) => {
          sseHead(res);
          arrived();
        },
        when: () => received.then(() => pause(30)),
        text: () => undefined,
      },
      {
        name: 'between events',
        handler: (res) => {
          sseHead(res);
          res.write(output());
        },
        when: (stream) => new Promise<void>((resolve) => stream.on('content', () => resolve())),
        text: () => textOf(protocol, blocks(), began()),
      },
      {
        name: 'while waiting to retry (Retry-After: 10 s)',
        handler: (res) => {
          status(res, 503, { 'retry-after': '10' });
          arrived();
        },
        when: () => received.then(() => pause(30)),
        text: () => undefined,
      },
    ];

    for (const phase of phases) {
      for (const via of ['abort()', 'the caller signal'] as const) {
        it(`${phase.name}, via ${via}`, async () => {
          received = new Promise((resolve) => {
            arrived = resolve;
          });
          await start(phase.handler);
          const controller = new AbortController();
          const outcome = await settle(
            protocol,
            client({ maxRetries: 2 }),
            (stream) => void phase.when(stream).then(() => (via === 'abort()' ? stream.abort('stop') : controller.abort('stop'))),
            { signal: controller.signal },
          );
          expectFailure(protocol, outcome, AbortError, phase.text());
          expect(server?.requests).toBe(1);
          await server?.socketsClosed();
        });
      }
    }
  });

  it('an abort after the end changes nothing', async () => {
    await start((res) => replay(res, blocks()));
    const stream = protocol.stream(client());
    const result = await stream.final();
    stream.abort('late');
    await expect(stream.final()).resolves.toBe(result);
    await server?.socketsClosed();
  });

  it('a tool loop aborted while its tool runs: AbortError, the tool sees its signal abort, no next request', async () => {
    const tools = recorded.tools[protocol.name];
    let running: () => void = () => undefined;
    const started = new Promise<void>((resolve) => {
      running = resolve;
    });
    let toolSawAbort = false;
    const lookup = defineTool({
      name: 'lookup',
      description: 'Looks a city up',
      parameters: z.object({ city: z.string() }).passthrough(),
      execute: (_args, { signal }) =>
        new Promise((_resolve, reject) => {
          running();
          signal.addEventListener('abort', () => {
            toolSawAbort = true;
            reject(signal.reason);
          });
        }),
    });
    await start((res) => replay(res, tools));
    const loop = protocol.loop(client({ maxRetries: 2 }), [lookup]);
    void started.then(() => loop.abort('stop'));
    const error = await loop.final().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(AbortError);
    expect(toolSawAbort).toBe(true);
    // The step's completion is kept: its text, and the calls that were running.
    const partial = error instanceof AbortError ? error.partial : undefined;
    expect(partial).toMatchObject({ text: textOf(protocol, tools), steps: [] });
    expect(server?.requests).toBe(1);
    await server?.socketsClosed();
  });
});
