import {
  AbortError,
  ApiError,
  type ContentEvent,
  defineTool,
  EventStream,
  type HandlersOf,
  streamToolLoop,
} from '@ai4ts/core';
import { abortError } from '@ai4ts/core/internal';
import { EventEmitter } from 'eventemitter3';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { describeStreamHandle } from '@ai4ts/test-kit';
import { fakeModel } from './tools.fake-adapter.js';

type Events = HandlersOf<ContentEvent>;

/** A bare EventStream over a scripted run: `parts` become content events, then `end` decides the outcome. */
function scripted(parts: string[], end: 'ok' | 'fail' | 'hang'): { handle: EventStream<ContentEvent, string, Events>; arrived: Promise<void> } {
  const emitter = new EventEmitter<Events>();
  let arrived!: () => void;
  const first = new Promise<void>((resolve) => {
    arrived = resolve;
  });
  const handle = new EventStream<ContentEvent, string, Events>(async (push, signal) => {
    let snapshot = '';
    for (const delta of parts) {
      await new Promise((resolve) => setTimeout(resolve, 1));
      snapshot += delta;
      const event: ContentEvent = { type: 'content', delta, snapshot, choice: 0 };
      push(event);
      emitter.emit('content', event);
      arrived();
    }
    if (end === 'fail') throw new ApiError('overloaded', { partial: snapshot });
    if (end === 'hang')
      await new Promise((_, reject) => signal.addEventListener('abort', () => reject(abortError(signal, snapshot))));
    return snapshot;
  }, emitter);
  return { handle, arrived: first };
}

describeStreamHandle('EventStream', {
  ok: () => scripted(['Hel', 'lo'], 'ok').handle,
  failing: () => scripted(['Hel'], 'fail').handle,
  hanging: () => scripted(['Hel'], 'hang'),
});

const echo = defineTool({
  name: 'echo',
  parameters: z.object({ text: z.string() }),
  execute: ({ text }) => text,
});

describeStreamHandle('ToolLoopStream', {
  ok: () =>
    streamToolLoop(
      fakeModel((_, step) =>
        step === 1 ? { content: 'Calling.', calls: [['c1', 'echo', '{"text":"hi"}']] } : { content: 'Done: hi' },
      ).adapter,
      { model: 'fake', messages: [{ role: 'user', content: 'echo hi' }] },
      { tools: [echo] },
    ),
  failing: () =>
    streamToolLoop(
      fakeModel((_, step) =>
        step === 1
          ? { content: 'Calling.', calls: [['c1', 'echo', '{"text":"hi"}']] }
          : { wait: Promise.reject(new ApiError('overloaded')) },
      ).adapter,
      { model: 'fake', messages: [{ role: 'user', content: 'echo hi' }] },
      { tools: [echo] },
    ),
  hanging: () => {
    const handle = streamToolLoop(
      fakeModel(() => ({ content: 'x', wait: new Promise(() => {}) })).adapter,
      { model: 'fake', messages: [{ role: 'user', content: 'wait' }] },
    );
    return { handle, arrived: new Promise<void>((resolve) => handle.once('step.start', () => resolve())) };
  },
});

describe('EventStream', () => {
  it('starts at once: handlers attached right after creation see every event', async () => {
    const { handle } = scripted(['a', 'b', 'c'], 'ok');
    const seen: string[] = [];
    handle.on('content', (event) => seen.push(event.delta));
    await expect(handle.final()).resolves.toBe('abc');
    expect(seen).toEqual(['a', 'b', 'c']);
  });

  it('a run that throws synchronously rejects final() instead of throwing from the constructor', async () => {
    const handle = new EventStream<ContentEvent, string, Events>(() => {
      throw new ApiError('bad');
    }, new EventEmitter<Events>());
    await expect(handle.final()).rejects.toBeInstanceOf(ApiError);
    await expect((async () => { for await (const _ of handle) { /* none */ } })()).rejects.toBeInstanceOf(ApiError);
  });

  it('the caller’s signal aborts the stream with its reason', async () => {
    const controller = new AbortController();
    const emitter = new EventEmitter<Events>();
    const handle = new EventStream<ContentEvent, string, Events>(
      (_push, signal) => new Promise((_, reject) => signal.addEventListener('abort', () => reject(abortError(signal)))),
      emitter,
      controller.signal,
    );
    controller.abort('stop');
    const error = await handle.final().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AbortError);
    expect((error as AbortError).cause).toBe('stop');
  });

  it('several loops read one handle concurrently, each from the first event', async () => {
    const { handle } = scripted(['x', 'y', 'z'], 'ok');
    const read = async () => {
      const out: string[] = [];
      for await (const event of handle) out.push(event.delta);
      return out;
    };
    expect(await Promise.all([read(), read()])).toEqual([
      ['x', 'y', 'z'],
      ['x', 'y', 'z'],
    ]);
  });
});
