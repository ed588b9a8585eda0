/**
 * ProtocolListener: the bookkeeping every protocol listener shares (status, error, the end and fail transitions,
 * reset), so a protocol's listener writes only how its events fold into its result.
 *
 * The rule: only this class changes `status` and `error`, through its transitions, and a listener that ended
 * (`completed` or `failed`) stays so until `reset()`:
 * - `markStreaming()`: `pending` to `streaming`, when the protocol's first event arrived;
 * - `complete()`: to `completed`, when the terminal event arrived (or at `end()`, for a stream whose protocol may
 *   end without one);
 * - `fail()` / `record()`: to `failed` with the first error, which gets the partial result; after `completed`
 *   nothing is recorded;
 * - `reset()`: back to `pending`, with a new state object from the protocol's `initialState`.
 * A subclass checks `hasEnded()` before it applies an event, and keeps every per-stream field in `state`: one
 * object of one shape, which `reset()` replaces whole (no field can be forgotten, and field reads stay
 * monomorphic on the per-chunk path).
 */
import type { SseEvent } from '@ai4ts/sse';
import { EventEmitter } from 'eventemitter3';
import type { Ai4tsError } from './errors.js';
import type { ErrorEvent, HandlersOf } from './events.js';
import { toAi4tsError } from './internal/fail.js';
import type { ListenerStatus, StreamListener } from './listener.js';

/** The events every protocol listener emits itself: `error`, when the stream failed. */
export type ProtocolListenerEvents = HandlersOf<ErrorEvent>;

/**
 * The base of the Chat Completions, Responses and Messages listeners: it owns {@link status}, {@link error},
 * {@link end}, {@link fail} and {@link reset} (see core's `StreamListener` for the contract), and the emitter their
 * events go through. A protocol's listener keeps its per-stream fields in {@link state}.
 *
 * @typeParam State The protocol's per-stream fields, as one object created by one function.
 * @typeParam Final The protocol's result (a completion, a response, a message), also every error's `partial`.
 * @typeParam Events The protocol's events, by name; `error` among them.
 */
export abstract class ProtocolListener<State, Final, Events extends ProtocolListenerEvents>
  extends EventEmitter<Events>
  implements StreamListener<Final>
{
  /** Everything the listener knows of the current stream; replaced whole by {@link reset}. */
  protected state: State;
  readonly #initialState: () => State;
  #status: ListenerStatus = 'pending';
  #error: Ai4tsError<Final> | undefined;

  /**
   * @param initialState Creates the state of a stream before its first event, always with the same fields in the
   *   same order (one shape). A function rather than an overridden method: the subclass's own fields do not exist
   *   yet while this constructor runs.
   */
  constructor(initialState: () => State) {
    super();
    this.#initialState = initialState;
    this.state = initialState();
  }

  /** Where the stream stands: `pending`, `streaming`, `completed` or `failed` (see core's `StreamListener`). */
  get status(): ListenerStatus {
    return this.#status;
  }

  /** The error that failed the stream (`partial` the result so far, when anything arrived), once it failed. */
  get error(): Ai4tsError<Final> | undefined {
    return this.#error;
  }

  /** Feeds one SSE event off the wire; throws the recorded error on bad data or an error event. */
  abstract pushSse(event: SseEvent): void;

  /**
   * The input ended. Returns the final result once the stream completed (or completes now, see
   * {@link endedEarly}); throws the recorded error, or records and throws the StreamIncompleteError of a stream
   * cut before its terminal event.
   */
  end(): Final {
    if (this.#error) throw this.#error;
    if (this.#status !== 'completed') {
      const cut = this.endedEarly();
      if (cut) throw this.fail(cut);
      this.complete();
    }
    return this.result();
  }

  /**
   * Records a failure from outside the stream (the network, an abort): any thrown value becomes an Ai4tsError whose
   * `partial` is {@link partial} unless it has one (none while `pending`: nothing arrived), `error` is emitted, and
   * the error is returned for the caller to throw. Once failed, returns the first error; once completed, returns
   * the error without recording it.
   */
  fail(error: unknown): Ai4tsError<Final> {
    if (this.#error) return this.#error;
    return this.record(toAi4tsError(error, { partial: this.#status === 'pending' ? undefined : this.partial() }));
  }

  /**
   * Back to a new listener's state (status `pending`, no error, a new {@link state}), its options and handlers
   * kept: the next attempt of a retried stream starts clean.
   */
  reset(): void {
    this.#status = 'pending';
    this.#error = undefined;
    this.state = this.#initialState();
  }

  /** Whether the stream completed or failed: a listener that ended applies no further event. */
  protected hasEnded(): boolean {
    return this.#status === 'completed' || this.#status === 'failed';
  }

  /** Whether anyone listens to `event`: an event object (and its snapshot) is only built for a listener. */
  protected hears(event: EventEmitter.EventNames<Events>): boolean {
    return this.listenerCount(event) > 0;
  }

  /** An event of the stream arrived: `pending` becomes `streaming` (an ended listener stays as it is). */
  protected markStreaming(): void {
    if (this.#status === 'pending') this.#status = 'streaming';
  }

  /** The terminal event arrived: the stream is `completed`, unless it already failed. */
  protected complete(): void {
    if (this.#status !== 'failed') this.#status = 'completed';
  }

  /**
   * Records `failure` as is (its `partial` already set, or none on purpose): status `failed`, an `error` event, and
   * the error returned for the caller to throw. Once failed, returns the first error; once completed, records
   * nothing. {@link fail} is the same with the partial attached.
   */
  protected record(failure: Ai4tsError<Final>): Ai4tsError<Final> {
    if (this.#error) return this.#error;
    if (this.#status === 'completed') return failure;
    this.#status = 'failed';
    this.#error = failure;
    // TypeScript cannot resolve the event names of an emitter whose events are a type parameter, though every
    // `Events` has `error`: one widening.
    (this as unknown as EventEmitter<ProtocolListenerEvents>).emit('error', { type: 'error', error: failure });
    return failure;
  }

  /** The result so far, in the final result's shape: an error's `partial`. Asked only once something arrived. */
  protected abstract partial(): Final | undefined;

  /** The final result; asked by {@link end} once the stream completed. */
  protected abstract result(): Final;

  /**
   * The input ended before the terminal event: returns the StreamIncompleteError to record, or undefined when the
   * protocol counts the stream whole without it (then completed by {@link end}; finish what is open first).
   */
  protected abstract endedEarly(): Ai4tsError | undefined;
}

