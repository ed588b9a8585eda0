/**
 * A plain request with `output` (a protocol service's `create` or `stream`): the tool loop's engine for one step,
 * so the answer is read exactly as the loop reads its last one (`object` validated with the schema's defaults,
 * `object` events while it streams, a refusal or an invalid answer as the same typed errors). No tool runs: a
 * call goes back to the caller (`finishReason: 'tool_calls'`), and `repair`, which asks again, needs the loop.
 */
import { runToolLoop, type ToolLoopAdapter, type ToolLoopOptions, type ToolLoopResult } from '../tools/loop.js';
import type { SdkFields } from '../tools/request.js';
import { streamToolLoop, type ToolLoopStream } from '../tools/stream.js';
import { assertZod4 } from '../schema.js';
import { outputOf } from './output.js';

/** A request that may carry `output` (the SDK's fields beside the protocol's). */
type OutputRequest = SdkFields & { readonly output?: unknown };

/** Whether a plain request asks for structured output (then its service runs {@link runOutputRequest}). */
export function hasOutput(request: object): boolean {
  return outputOf(request) !== undefined;
}

function optionsOf<Request extends OutputRequest, Completion>(
  request: Request,
  signal: AbortSignal | undefined,
): ToolLoopOptions<Request, Completion> {
  const options: ToolLoopOptions<Request, Completion> = { maxSteps: 1, passThroughToolCalls: true };
  const schema = request.output;
  if (schema !== undefined) {
    assertZod4('output', schema);
    options.output = schema;
  }
  if (request.telemetry !== undefined) options.telemetry = request.telemetry;
  if (signal !== undefined) options.signal = signal;
  return options;
}

/** One request with `output`, to its result (`object`, `text`, the completion); see the module comment. */
export function runOutputRequest<Request extends OutputRequest, Completion, Message>(
  adapter: ToolLoopAdapter<Request, Completion, Message>,
  request: Request,
  signal: AbortSignal | undefined,
): Promise<ToolLoopResult<Request, Completion, Message>> {
  return runToolLoop(adapter, request, optionsOf(request, signal));
}

/** One streamed request with `output`: the model's events and its `object` events; see the module comment. */
export function streamOutputRequest<Request extends OutputRequest, Completion, Message>(
  adapter: ToolLoopAdapter<Request, Completion, Message>,
  request: Request,
  signal: AbortSignal | undefined,
): ToolLoopStream<Request, Completion, Message> {
  return streamToolLoop(adapter, request, optionsOf(request, signal));
}
