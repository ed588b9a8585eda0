/**
 * One conformance suite for every stream handle (the three protocol streams and the tool loop): they are all
 * `EventStream`s and must behave alike. Each package's test calls {@link describeStreamHandle} with its cases.
 */
import { AbortError, Ai4tsError, type EventStream } from '@ai4ts/core';
import type { OpenEvents } from '@ai4ts/core/internal';
import { parseSse } from '@ai4ts/sse';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

// biome-ignore lint/suspicious/noExplicitAny: the suite takes every handle, whatever its event map.
type AnyHandle = EventStream<{ type: string }, unknown, any>;

/**
 * How to start a handle of one kind in the three situations the suite needs. Synchronously: the suite attaches
 * handlers right after creation, as users do, and expects them to see every event.
 */
export interface HandleCases {
  /** Some events (at least one `content`), then success. */
  ok(): AnyHandle;
  /** Some events, then a failure (an Ai4tsError with a `partial`). */
  failing(): AnyHandle;
  /** At least one event, then no more until aborted. `arrived` resolves once the first event is out. */
  hanging(): { handle: AnyHandle; arrived: Promise<void> };
}

/**
 * Opens `sse` served one event block per macrotask, as a protocol stream's `open`; with `hang`, the body then
 * stays open until aborted.
 */
export function dripped(sse: string, hang = false): OpenEvents {
  const blocks = sse.split(/(?<=\n\n)/).map((block) => new TextEncoder().encode(block));
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      await new Promise((resolve) => setTimeout(resolve, 1));
      const block = blocks.shift();
      if (block) controller.enqueue(block);
      else if (!hang) controller.close();
      else await new Promise(() => undefined);
    },
  });
  return async ({ signal }) => parseSse(body, { signal });
}

/** Resolves once the handle emitted its first `content` event. */
export function firstContent(handle: AnyHandle): Promise<void> {
  return new Promise<void>((resolve) => handle.once('content', () => resolve()));
}

async function drain(handle: AsyncIterable<{ type: string }>): Promise<{ type: string }[]> {
  const out: { type: string }[] = [];
  for await (const event of handle) out.push(event);
  return out;
}

async function frames(body: ReadableStream<Uint8Array>): Promise<{ event: string; data: string }[]> {
  const out: { event: string; data: string }[] = [];
  for await (const { event, data } of parseSse(body)) out.push({ event, data });
  return out;
}

export function describeStreamHandle(name: string, cases: HandleCases): void {
  describe(`${name}: the stream handle rules`, () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    beforeEach(() => {
      unhandled.length = 0;
      process.on('unhandledRejection', onUnhandled);
    });
    afterEach(() => {
      process.off('unhandledRejection', onUnhandled);
    });

    it('buffers from the start: a loop begun after the end sees every event, and every loop sees them all', async () => {
      const handle = cases.ok();
      const live: string[] = [];
      handle.on('content', (event: { type: string }) => live.push(event.type));
      await handle.final();
      expect(handle.settled).toBe(true);
      const first = await drain(handle);
      const second = await drain(handle);
      expect(first.length).toBeGreaterThan(0);
      expect(second).toEqual(first);
      expect(first.filter((event) => event.type === 'content').length).toBe(live.length);
    });

    it('once fires once, off stops a handler', async () => {
      const handle = cases.ok();
      let once = 0;
      let off = 0;
      const counted = () => off++;
      handle.once('content', () => once++);
      handle.on('content', counted);
      handle.off('content', counted);
      await handle.final();
      expect(once).toBe(1);
      expect(off).toBe(0);
    });

    it('a failure: the loop throws it after the events before it, final() rejects with it, partial kept', async () => {
      const handle = cases.failing();
      const seen: { type: string }[] = [];
      const thrown = await (async () => {
        for await (const event of handle) seen.push(event);
      })().catch((error: unknown) => error);
      expect(thrown).toBeInstanceOf(Ai4tsError);
      expect((thrown as Ai4tsError).partial).toBeDefined();
      await expect(handle.final()).rejects.toBe(thrown);
    });

    it('a failure nobody awaits is not an unhandled rejection', async () => {
      const handle = cases.failing();
      await handle.final().catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(unhandled).toEqual([]);
    });

    it('abort(reason) rejects final() with an AbortError whose cause is the reason and keeps the partial', async () => {
      const { handle, arrived } = cases.hanging();
      await arrived;
      const reason = new Error('enough');
      handle.abort(reason);
      const error = await handle.final().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(AbortError);
      expect((error as AbortError).cause).toBe(reason);
      expect((error as AbortError).partial).toBeDefined();
    });

    it('leaving a loop early aborts a running stream', async () => {
      const { handle } = cases.hanging();
      for await (const _event of handle) break;
      await expect(handle.final()).rejects.toBeInstanceOf(AbortError);
    });

    it('abort() after the end changes nothing', async () => {
      const handle = cases.ok();
      const result = await handle.final();
      handle.abort(new Error('late'));
      await expect(handle.final()).resolves.toBe(result);
    });

    it('toReadableStream: one SSE frame per event, then done; a failure ends with an error frame', async () => {
      const ok = cases.ok();
      const events = await drain(ok);
      const okFrames = await frames(ok.toReadableStream());
      expect(okFrames.map((frame) => frame.event)).toEqual([...events.map((event) => event.type), 'done']);
      expect(okFrames.slice(0, -1).map((frame) => JSON.parse(frame.data))).toEqual(JSON.parse(JSON.stringify(events)));

      const failing = cases.failing();
      const failFrames = await frames(failing.toReadableStream());
      const last = failFrames.at(-1);
      expect(last?.event).toBe('error');
      const error = await failing.final().catch((e: unknown) => e);
      expect(JSON.parse(last?.data ?? '{}')).toMatchObject({ name: (error as Error).name, message: (error as Error).message });
    });

    it('cancelling the readable aborts a running stream', async () => {
      const { handle, arrived } = cases.hanging();
      await arrived;
      const reader = handle.toReadableStream().getReader();
      await reader.read();
      await reader.cancel(new Error('client left'));
      await expect(handle.final()).rejects.toBeInstanceOf(AbortError);
    });
  });
}
