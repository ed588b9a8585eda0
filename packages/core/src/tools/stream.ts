/**
 * The tool loop as one {@link EventStream} over all its steps: the loop starts when the stream is made, events
 * are buffered for every reader, and `final()` alone is enough.
 */
import { EventEmitter } from 'eventemitter3';
import type { HandlersOf } from '../events.js';
import { emitByType } from '../internal/emit.js';
import { EventStream } from '../stream.js';
import {
  runSteps,
  type LoopStart,
  type ToolLoopAdapter,
  type ToolLoopEvent,
  type ToolLoopOptions,
  type ToolLoopResult,
} from './loop.js';
import type { LoopState, ResumeDecisions } from './suspend.js';

/** The handler map of a loop's events, for `on` / `once` / `off`. */
export type ToolLoopEvents<Request = unknown, Completion = unknown> = HandlersOf<ToolLoopEvent<Request, Completion>>;

/**
 * A running tool loop: the step-tagged {@link ToolLoopEvent}s of every step, and `final()` the loop's result.
 * Aborting it (or the signal of its options) aborts the model request in flight and signals running tools.
 */
export class ToolLoopStream<Request, Completion, Message> extends EventStream<
  ToolLoopEvent<Request, Completion>,
  ToolLoopResult<Request, Completion, Message>,
  ToolLoopEvents<Request, Completion>
> {
  constructor(
    adapter: ToolLoopAdapter<Request, Completion, Message>,
    start: LoopStart<Request, Message>,
    options: ToolLoopOptions<Request, Completion>,
  ) {
    const emitter = new EventEmitter<ToolLoopEvents<Request, Completion>>();
    super(
      (push, signal) =>
        runSteps(
          adapter,
          start,
          options,
          (event) => {
            push(event);
            emitByType(emitter, event);
          },
          signal,
        ),
      emitter,
      options.signal,
    );
  }
}

/** Starts a tool loop and returns it as a {@link ToolLoopStream}. */
export function streamToolLoop<Request, Completion, Message>(
  adapter: ToolLoopAdapter<Request, Completion, Message>,
  request: Request,
  options: ToolLoopOptions<Request, Completion> = {},
): ToolLoopStream<Request, Completion, Message> {
  return new ToolLoopStream(adapter, { request }, options);
}

/**
 * Resumes a suspended loop (see `resumeToolLoop`) as a {@link ToolLoopStream}: the resumed step's `tool.result`
 * events first, then the next steps'. A state or decisions that do not check out reject `final()` with a
 * LoopStateError before any call runs.
 */
export function streamResumeToolLoop<Request, Completion, Message>(
  adapter: ToolLoopAdapter<Request, Completion, Message>,
  state: LoopState<Request, Message>,
  decisions: ResumeDecisions,
  options: ToolLoopOptions<Request, Completion> = {},
): ToolLoopStream<Request, Completion, Message> {
  return new ToolLoopStream(adapter, { state, decisions }, options);
}

/**
 * A {@link ToolLoopStream} of a request with `output`: `final()` resolves to a result whose `object` has the
 * schema's type, and its `object` events carry deep-partial values of that type.
 */
export type OutputLoopStream<Request, Completion, Message, Obj> = {
  final(): Promise<ToolLoopResult<Request, Completion, Message, Obj>>;
  [Symbol.asyncIterator](): AsyncGenerator<ToolLoopEvent<Request, Completion, Obj>, void, undefined>;
} & ToolLoopStream<Request, Completion, Message>;
