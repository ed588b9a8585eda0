import {
  type Ai4tsError,
  ConnectionError,
  type ErrorEvent,
  type HandlersOf,
  ProtocolError,
  ProtocolListener,
  readInto,
  StreamIncompleteError,
} from '@ai4ts/core';
import type { SseEvent } from '@ai4ts/sse';
import { describe, expect, it } from 'vitest';

interface SumState {
  sum: number;
  terms: number[];
}

const initialSumState = (): SumState => ({ sum: 0, terms: [] });

/**
 * `data: N` adds N, `data: end` completes, `data: bad` is bad data recorded with its own partial. `lenient`: a stream
 * that ends without `end` is whole.
 */
class SumListener extends ProtocolListener<SumState, number, HandlersOf<ErrorEvent>> {
  readonly #lenient: boolean;

  constructor(lenient = false) {
    super(initialSumState);
    this.#lenient = lenient;
  }

  get terms(): number[] {
    return this.state.terms;
  }

  override pushSse(event: SseEvent): void {
    if (this.hasEnded()) return;
    if (event.data === 'bad') throw this.record(new ProtocolError<number>('bad', { line: event.data, partial: -1 }));
    if (event.data === 'end') {
      this.complete();
      return;
    }
    this.markStreaming();
    this.state.sum += Number(event.data);
    this.state.terms.push(Number(event.data));
  }

  protected override partial(): number {
    return this.state.sum;
  }

  protected override result(): number {
    return this.state.sum;
  }

  protected override endedEarly(): Ai4tsError | undefined {
    return this.#lenient ? undefined : new StreamIncompleteError('no end');
  }
}

const sse = (data: string): SseEvent => ({ event: 'message', data });

function feed(listener: SumListener, ...data: string[]): Ai4tsError[] {
  const errors: Ai4tsError[] = [];
  listener.on('error', (event) => errors.push(event.error));
  for (const item of data) {
    try {
      listener.pushSse(sse(item));
    } catch {
      // Recorded: read through `errors` and `listener.error`.
    }
  }
  return errors;
}

describe('ProtocolListener', () => {
  it('goes pending, streaming, completed; once completed, input is ignored and end() gives the result', () => {
    const listener = new SumListener();
    expect(listener.status).toBe('pending');
    feed(listener, '1');
    expect(listener.status).toBe('streaming');
    feed(listener, '2', 'end', '100', 'bad');
    expect(listener.status).toBe('completed');
    expect(listener.end()).toBe(3);
    expect(listener.error).toBeUndefined();
  });

  it('end() before the terminal event records the StreamIncompleteError with the partial, once', () => {
    const listener = new SumListener();
    const errors = feed(listener, '1', '2');
    const error: unknown = (() => {
      try {
        listener.end();
      } catch (thrown) {
        return thrown;
      }
    })();
    expect(error).toBeInstanceOf(StreamIncompleteError);
    expect(error).toMatchObject({ partial: 3 });
    expect(listener.status).toBe('failed');
    expect(listener.error).toBe(error);
    expect(() => listener.end()).toThrow(listener.error);
    expect(errors).toEqual([error]);
  });

  it('a protocol whose stream may end without its terminal event completes at end()', () => {
    const listener = new SumListener(true);
    feed(listener, '4');
    expect(listener.end()).toBe(4);
    expect(listener.status).toBe('completed');
  });

  it('fail() gives no partial while pending, keeps the first error, and an ended listener takes no more input', () => {
    const listener = new SumListener();
    const errors = feed(listener);
    const first = listener.fail(new Error('refused'));
    expect(first).toBeInstanceOf(ConnectionError);
    expect(first.partial).toBeUndefined();
    expect(listener.fail(new Error('again'))).toBe(first);
    feed(listener, '1', 'end');
    expect(listener.status).toBe('failed');
    expect(listener.terms).toEqual([]);
    expect(errors).toEqual([first]);
  });

  it('fail() after completion converts the error and records nothing', () => {
    const listener = new SumListener();
    const errors = feed(listener, '5', 'end');
    const error = listener.fail(new Error('late'));
    expect(error.partial).toBe(5);
    expect(listener.status).toBe('completed');
    expect(listener.error).toBeUndefined();
    expect(errors).toEqual([]);
  });

  it('record() keeps the partial the protocol gave', () => {
    const listener = new SumListener();
    const errors = feed(listener, '1', 'bad');
    expect(listener.error).toBeInstanceOf(ProtocolError);
    expect(listener.error?.partial).toBe(-1);
    expect(errors).toEqual([listener.error]);
  });

  it('reset() starts a new state object, pending and without error, its handlers kept', () => {
    const listener = new SumListener();
    const errors = feed(listener, '1', 'bad');
    const terms = listener.terms;
    listener.reset();
    expect(listener.status).toBe('pending');
    expect(listener.error).toBeUndefined();
    expect(listener.terms).not.toBe(terms);
    expect(listener.terms).toEqual([]);
    feed(listener, '2', 'bad');
    expect(errors).toHaveLength(2);
  });

  it('is the listener readInto reads', async () => {
    async function* events() {
      for (const data of ['1', '2', 'end', '4']) yield sse(data);
    }
    await expect(readInto(events(), new SumListener())).resolves.toBe(3);
  });
});
