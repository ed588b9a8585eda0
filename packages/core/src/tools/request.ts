/**
 * The tool loop's settings as a request carries them. One rule for every protocol: a request runs the loop when
 * its `tools` hold a `defineTool` tool or it sets any loop field (structured `output` and `repair` included); those
 * fields configure the SDK and never reach the wire as they are, and neither does an empty `tools` array.
 */
import type { TelemetryOptions } from '../observe/telemetry.js';
import type { RequestOptions } from '../transport/transport.js';
import { isTool, type Tool } from './define.js';
import type { ToolLoopOptions } from './loop.js';
import type { ResumeDecisions } from './suspend.js';

/** The names of the loop fields a request may carry. */
export const LOOP_FIELDS = [
  'maxSteps',
  'stopWhen',
  'passThroughToolCalls',
  'concurrency',
  'onStepFinish',
  'onToolCall',
  'prepareStep',
  'mcp',
  'output',
  'repair',
  'partialToolArguments',
] as const;

/** The name of one loop field. */
export type LoopFieldName = (typeof LOOP_FIELDS)[number];

/** The loop's settings a request may carry beside its protocol fields; never sent to the API. */
export type LoopFields<Request = unknown, Completion = unknown> = Pick<
  ToolLoopOptions<Request, Completion>,
  LoopFieldName
>;

/**
 * `T` without its `tools`, to build a loop request (`tools` may then hold `defineTool` tools). `Omit` would not do:
 * on a type with an index signature it keeps only the index signature, and every named field would become `unknown`.
 */
export type WithoutTools<T> = { [K in keyof T as K extends 'tools' ? never : K]: T[K] };

/** What {@link isLoopRequest} and `loopOptionsOf` read: a request with `tools` and loop fields. */
export type LoopRequestShape = { readonly tools?: readonly unknown[] | undefined } & {
  readonly [K in LoopFieldName]?: unknown;
};

/** The SDK's fields any request may carry (loop or not); never sent to the API. */
export interface SdkFields {
  /** Telemetry of this request (and every step of its loop), merged over the client's. */
  telemetry?: TelemetryOptions;
}

/** Fields that configure the SDK and never reach the wire: the loop's and {@link SdkFields}. */
export const SDK_FIELD_SET: ReadonlySet<string> = new Set([...LOOP_FIELDS, 'telemetry']);

/** Whether a request runs the tool loop: it has a `defineTool` tool, or sets a loop field. */
export function isLoopRequest(request: LoopRequestShape): boolean {
  return request.tools?.some(isTool) === true || LOOP_FIELDS.some((field) => request[field] !== undefined);
}

/** The `defineTool` tools of a request's `tools`. */
export function toolsOf(request: LoopRequestShape): Tool[] {
  return (request.tools ?? []).filter(isTool);
}

/**
 * What `resume` takes beside a suspended loop's state: the decisions on its pending calls, and the loop's settings
 * given again, as the request carried them (functions do not serialise): `tools`, `stopWhen`, `maxSteps`, the hooks.
 */
export type LoopResumeOptions<Request = unknown, Completion = unknown> = ResumeDecisions &
  LoopFields<Request, Completion> &
  SdkFields & {
    /** The loop's `defineTool` tools, as the request had them: the approved calls run with these. */
    tools?: readonly Tool[];
  };

/** The loop options a request (or a resume's options) carries, with the caller's signal. */
export function loopOptionsOf<Request, Completion>(
  request: LoopFields<Request, Completion> & LoopRequestShape & SdkFields,
  signal?: AbortSignal,
): ToolLoopOptions<Request, Completion> {
  const options: ToolLoopOptions<Request, Completion> = { tools: toolsOf(request) };
  if (request.telemetry !== undefined) options.telemetry = request.telemetry;
  if (request.maxSteps !== undefined) options.maxSteps = request.maxSteps;
  if (request.stopWhen !== undefined) options.stopWhen = request.stopWhen;
  if (request.passThroughToolCalls !== undefined) options.passThroughToolCalls = request.passThroughToolCalls;
  if (request.concurrency !== undefined) options.concurrency = request.concurrency;
  if (request.onStepFinish !== undefined) options.onStepFinish = request.onStepFinish;
  if (request.onToolCall !== undefined) options.onToolCall = request.onToolCall;
  if (request.prepareStep !== undefined) options.prepareStep = request.prepareStep;
  if (request.mcp !== undefined) options.mcp = request.mcp;
  if (request.output !== undefined) options.output = request.output;
  if (request.repair !== undefined) options.repair = request.repair;
  if (request.partialToolArguments !== undefined) options.partialToolArguments = request.partialToolArguments;
  if (signal !== undefined) options.signal = signal;
  return options;
}

/**
 * The request as a suspended loop's state keeps it: a JSON copy without SDK fields, `defineTool` tools (the resume
 * gives them again) and an emptied `tools`.
 */
export function stateRequestOf<Request extends object>(request: Request): Request {
  const kept: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(request)) {
    if (value === undefined || SDK_FIELD_SET.has(key)) continue;
    if (key === 'tools' && Array.isArray(value)) {
      const wire = value.filter((tool: unknown) => !isTool(tool));
      if (wire.length > 0) kept.tools = wire;
      continue;
    }
    kept[key] = value;
  }
  // A request is the protocol's JSON with the SDK's fields taken off: what remains is the same type, as JSON.
  return JSON.parse(JSON.stringify(kept)) as Request;
}

/** The call's options with a request's own `telemetry` merged over theirs: what a plain request is sent with. */
export function callOptionsOf<Options extends RequestOptions>(request: SdkFields, options: Options): Options {
  if (request.telemetry === undefined) return options;
  return { ...options, telemetry: { ...options.telemetry, ...request.telemetry } };
}

/**
 * The JSON body of a request: SDK fields (the loop's, `telemetry`), `undefined` values and an empty `tools` array left off, each
 * `defineTool` tool converted by `toWireTool` (the protocol's tool shape), every other field kept as it is.
 * Never mutates `request`.
 */
export function toWireBody(
  request: object,
  toWireTool: (tool: Tool) => unknown,
): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(request)) {
    if (value === undefined || SDK_FIELD_SET.has(key)) continue;
    if (key === 'tools' && Array.isArray(value)) {
      if (value.length > 0) body.tools = value.map((tool: unknown) => (isTool(tool) ? toWireTool(tool) : tool));
      continue;
    }
    body[key] = value;
  }
  return body;
}
