/**
 * A protocol's two tool-loop functions (`run*ToolLoop`, `stream*ToolLoop`): its service's `runLoop` and `streamLoop`
 * with the transport as first argument, typed as the service types them (a request with `output` types the
 * result's `object` and the `object` events as the schema's output).
 */
import type * as z from 'zod';
import type { OutputLoopStream, ToolLoopStream } from './stream.js';
import type { ToolLoopResult } from './loop.js';
import type { Transport } from '../transport/transport.js';

/** What the loop functions need of a protocol's service (core's `ProtocolService` is one). */
interface LoopCalls<Request, Completion, Message, Options> {
  runLoop(request: Request, options?: Options): Promise<ToolLoopResult<Request, Completion, Message>>;
  streamLoop(request: Request, options?: Options): ToolLoopStream<Request, Completion, Message>;
}

/**
 * `run` resolves to the loop's result, `stream` starts it as one event stream over all steps (it starts now, and
 * `final()` resolves or rejects like `run`). `options.signal` aborts the loop.
 */
export function toolLoopEntryPoints<Request, Completion, Message, Options>(
  service: (transport: Transport) => LoopCalls<Request, Completion, Message, Options>,
) {
  function run<S extends z.ZodType>(
    transport: Transport,
    request: Request & { output: S },
    options?: Options,
  ): Promise<ToolLoopResult<Request, Completion, Message, z.output<S>>>;
  function run(transport: Transport, request: Request, options?: Options): Promise<ToolLoopResult<Request, Completion, Message>>;
  function run(transport: Transport, request: Request, options?: Options): Promise<ToolLoopResult<Request, Completion, Message>> {
    return service(transport).runLoop(request, options);
  }
  function stream<S extends z.ZodType>(
    transport: Transport,
    request: Request & { output: S },
    options?: Options,
  ): OutputLoopStream<Request, Completion, Message, z.output<S>>;
  function stream(transport: Transport, request: Request, options?: Options): ToolLoopStream<Request, Completion, Message>;
  function stream(transport: Transport, request: Request, options?: Options): ToolLoopStream<Request, Completion, Message> {
    return service(transport).streamLoop(request, options);
  }
  return { run, stream };
}
