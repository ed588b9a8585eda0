/**
 * A protocol's function forms (`streamChatCompletion`, `chatToolLoopAdapter`, `runChatToolLoop`,
 * `streamChatToolLoop`, and their kin): its service's calls with the transport as first argument, typed as the
 * service types them (a loop request with `output` types the result's `object` and the `object` events).
 */
import type * as z from 'zod';
import type { OutputLoopStream, ToolLoopStream } from './stream.js';
import type { ToolLoopAdapter, ToolLoopResult } from './loop.js';
import type { LoopResumeOptions } from './request.js';
import type { LoopState } from './suspend.js';
import type { Transport } from '../transport/transport.js';

/**
 * A protocol's tool-loop calls, as its service has them (core's `ProtocolService`): run or stream a loop, and
 * resume a suspended one from its state. The front door's clients and the function forms both call these.
 */
export interface LoopCalls<LoopRequest, Final, Message, Options> {
  runLoop(request: LoopRequest, options?: Options): Promise<ToolLoopResult<LoopRequest, Final, Message>>;
  streamLoop(request: LoopRequest, options?: Options): ToolLoopStream<LoopRequest, Final, Message>;
  resumeLoop(
    state: LoopState<LoopRequest, Message>,
    resume: LoopResumeOptions<LoopRequest, Final>,
    options?: Options,
  ): Promise<ToolLoopResult<LoopRequest, Final, Message>>;
  streamResumeLoop(
    state: LoopState<LoopRequest, Message>,
    resume: LoopResumeOptions<LoopRequest, Final>,
    options?: Options,
  ): ToolLoopStream<LoopRequest, Final, Message>;
}

/** What the function forms need of a protocol's service: its loop calls, plain streams and loop adapters. */
interface ServiceCalls<Request, LoopRequest, Completion, Message, Stream, Options>
  extends LoopCalls<LoopRequest, Completion, Message, Options> {
  stream(request: Request, options?: Options): Stream;
  loopAdapter(options: Options | undefined): ToolLoopAdapter<LoopRequest, Completion, Message>;
}

/**
 * `stream` starts one plain streaming request; `loopAdapter` is the loop adapter of one loop (make one per loop);
 * `run` resolves to the loop's result, `streamLoop` starts it as one event stream over all steps (it starts now, and
 * `final()` resolves or rejects like `run`); `resume` and `streamResume` continue a suspended loop from its state.
 * `options.signal` aborts the call or the loop.
 */
export function serviceFunctions<Request, LoopRequest, Completion, Message, Stream, Options>(
  service: (transport: Transport) => ServiceCalls<Request, LoopRequest, Completion, Message, Stream, Options>,
) {
  function run<S extends z.ZodType>(
    transport: Transport,
    request: LoopRequest & { output: S },
    options?: Options,
  ): Promise<ToolLoopResult<LoopRequest, Completion, Message, z.output<S>>>;
  function run(
    transport: Transport,
    request: LoopRequest,
    options?: Options,
  ): Promise<ToolLoopResult<LoopRequest, Completion, Message>>;
  function run(
    transport: Transport,
    request: LoopRequest,
    options?: Options,
  ): Promise<ToolLoopResult<LoopRequest, Completion, Message>> {
    return service(transport).runLoop(request, options);
  }
  function streamLoop<S extends z.ZodType>(
    transport: Transport,
    request: LoopRequest & { output: S },
    options?: Options,
  ): OutputLoopStream<LoopRequest, Completion, Message, z.output<S>>;
  function streamLoop(
    transport: Transport,
    request: LoopRequest,
    options?: Options,
  ): ToolLoopStream<LoopRequest, Completion, Message>;
  function streamLoop(
    transport: Transport,
    request: LoopRequest,
    options?: Options,
  ): ToolLoopStream<LoopRequest, Completion, Message> {
    return service(transport).streamLoop(request, options);
  }
  return {
    stream: (transport: Transport, request: Request, options?: Options): Stream =>
      service(transport).stream(request, options),
    loopAdapter: (transport: Transport, options?: Options): ToolLoopAdapter<LoopRequest, Completion, Message> =>
      service(transport).loopAdapter(options),
    run,
    streamLoop,
    resume: (
      transport: Transport,
      state: LoopState<LoopRequest, Message>,
      resume: LoopResumeOptions<LoopRequest, Completion>,
      options?: Options,
    ): Promise<ToolLoopResult<LoopRequest, Completion, Message>> => service(transport).resumeLoop(state, resume, options),
    streamResume: (
      transport: Transport,
      state: LoopState<LoopRequest, Message>,
      resume: LoopResumeOptions<LoopRequest, Completion>,
      options?: Options,
    ): ToolLoopStream<LoopRequest, Completion, Message> => service(transport).streamResumeLoop(state, resume, options),
  };
}
