/**
 * A protocol's two tool-loop entry points (`run*ToolLoop`, `stream*ToolLoop`), made once from its adapter: the loop's
 * settings come from the request, the options apply to every step, and a request with `output` types the result's
 * `object` (and the `object` events) as the schema's output.
 */
import type * as z from 'zod';
import type { RequestOptions, Transport } from '../transport/transport.js';
import { runToolLoop, type ToolLoopAdapter, type ToolLoopResult } from './loop.js';
import { type LoopFields, type LoopRequestShape, loopOptionsOf, type SdkFields } from './request.js';
import { type OutputLoopStream, streamToolLoop, type ToolLoopStream } from './stream.js';

/**
 * `run` resolves to the loop's result, `stream` starts it as one event stream over all steps (it starts now, and
 * `final()` resolves or rejects like `run`). `options.signal` aborts the loop.
 */
export function toolLoopEntryPoints<
  Request extends LoopFields<Request, Completion> & LoopRequestShape & SdkFields,
  Completion,
  Message,
  Options extends RequestOptions,
>(adapter: (transport: Transport, options?: Options) => ToolLoopAdapter<Request, Completion, Message>) {
  function run<S extends z.ZodType>(
    transport: Transport,
    request: Request & { output: S },
    options?: Options,
  ): Promise<ToolLoopResult<Request, Completion, Message, z.output<S>>>;
  function run(transport: Transport, request: Request, options?: Options): Promise<ToolLoopResult<Request, Completion, Message>>;
  function run(transport: Transport, request: Request, options?: Options): Promise<ToolLoopResult<Request, Completion, Message>> {
    return runToolLoop(adapter(transport, options), request, loopOptionsOf(request, options?.signal));
  }
  function stream<S extends z.ZodType>(
    transport: Transport,
    request: Request & { output: S },
    options?: Options,
  ): OutputLoopStream<Request, Completion, Message, z.output<S>>;
  function stream(transport: Transport, request: Request, options?: Options): ToolLoopStream<Request, Completion, Message>;
  function stream(transport: Transport, request: Request, options?: Options): ToolLoopStream<Request, Completion, Message> {
    return streamToolLoop(adapter(transport, options), request, loopOptionsOf(request, options?.signal));
  }
  return { run, stream };
}
