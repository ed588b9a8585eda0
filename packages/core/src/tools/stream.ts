/**
 * The tool loop as one event stream over all its steps. The loop starts when the stream is made, whether or not
 * anyone iterates it; events wait in a buffer for the reader, and `final()` alone is enough.
 */
import {
  type ToolLoopAdapter,
  type ToolLoopEvent,
  type ToolLoopOptions,
  type ToolLoopResult,
  runSteps,
} from './loop.js';

/** Starts a tool loop and returns it as a stream of {@link ToolLoopEvent}s with a `final()` result. */
export function streamToolLoop<Request, Completion, Message>(
  adapter: ToolLoopAdapter<Request, Completion, Message>,
  request: Request,
  options: ToolLoopOptions<Request, Completion> = {},
): ToolLoopStream<Request, Completion, Message> {
  return new ToolLoopStream(adapter, request, options);
}

/**
 * A running tool loop. Iterate it (once) for the events of every step; the iteration throws the loop's error
 * after the events that preceded it. Stopping the iteration early aborts the loop. `final()` resolves to the result.
 */
export class ToolLoopStream<Request, Completion, Message>
  implements AsyncIterable<ToolLoopEvent<Request, Completion>>
{
  readonly #controller = new AbortController();
  readonly #result: Promise<ToolLoopResult<Request, Completion, Message>>;
  #buffer: ToolLoopEvent<Request, Completion>[] = [];
  #state: 'running' | 'done' | 'failed' = 'running';
  #error: unknown;
  #wake: (() => void) | undefined;
  #iterated = false;

  constructor(
    adapter: ToolLoopAdapter<Request, Completion, Message>,
    request: Request,
    options: ToolLoopOptions<Request, Completion>,
  ) {
    const outer = options.signal;
    const abort = () => this.#controller.abort(outer?.reason);
    if (outer?.aborted) abort();
    outer?.addEventListener('abort', abort, { once: true });
    this.#result = runSteps(adapter, request, options, (event) => this.#push(event), this.#controller.signal);
    this.#result
      .then(
        () => this.#settle('done'),
        (error: unknown) => {
          this.#error = error;
          this.#settle('failed');
        },
      )
      .finally(() => outer?.removeEventListener('abort', abort));
  }

  /** The loop's result, once it is done. */
  final(): Promise<ToolLoopResult<Request, Completion, Message>> {
    return this.#result;
  }

  /** Stops the loop: the model request in flight is aborted, running tools are signalled, the loop rejects with an AbortError. */
  abort(reason?: unknown): void {
    this.#controller.abort(reason);
  }

  async *[Symbol.asyncIterator](): AsyncIterator<ToolLoopEvent<Request, Completion>> {
    if (this.#iterated) throw new TypeError('A tool loop stream can be iterated only once');
    this.#iterated = true;
    let ended = false;
    try {
      while (true) {
        const events = this.#buffer;
        this.#buffer = [];
        yield* events;
        if (this.#buffer.length > 0) continue;
        if (this.#state === 'done') {
          ended = true;
          return;
        }
        if (this.#state === 'failed') {
          ended = true;
          throw this.#error;
        }
        await new Promise<void>((resolve) => {
          this.#wake = resolve;
        });
      }
    } finally {
      if (!ended) this.#controller.abort(new Error('The stream consumer stopped reading'));
    }
  }

  #push(event: ToolLoopEvent<Request, Completion>) {
    this.#buffer.push(event);
    this.#notify();
  }

  #settle(state: 'done' | 'failed') {
    this.#state = state;
    this.#notify();
  }

  #notify() {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }
}
