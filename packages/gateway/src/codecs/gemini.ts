/**
 * Gemini's `generateContent` as the gateway speaks it: requests read into the gateway's shape (the model and the
 * streaming from the path), answers as Gemini SSE chunks or one `GenerateContentResponse`, upstream calls.
 *
 * Thought signatures: a function call's `thoughtSignature` travels in the call's id (see {@link encodeCallId}), the
 * one field every protocol's client sends back unchanged with the call and its result; a thought part's signature is
 * the reasoning's seal (`ReasoningPart.seal`, a `reasoning.signature` event of origin `gemini`); a text part's, which only
 * Gemini's clients can send back, is a {@link TEXT_SIGNATURE} event and the turn's `textSignature`. Each goes back on
 * the part it came with when the turn goes to a Gemini upstream.
 */
import type { FinishReason, Usage } from '@ai4ts/core';
import { isRecord } from '@ai4ts/core/internal';
import { GEMINI_PROTOCOL, type Part as GeminiPart } from '@ai4ts/gemini';
import type { SseEvent, SseMessage } from '@ai4ts/sse';
import { z } from 'zod';
import { type BridgeEvent, CompletionBuilder, openAIErrorObject } from '@ai4ts/bridge';
import { badRequest, parseBody } from './bad-request.js';
import {
  carries,
  EFFORT_BUDGETS,
  type GatewayErrorObject,
  type GatewayRequest,
  newId,
  type Part,
  type PathRoute,
  type ProtocolCodec,
  type ResponseFormat,
  readSeal,
  sealFor,
  sealOf,
  sealText,
  type ToolChoice,
  type ToolSpec,
  type Turn,
  uncarriedKeys,
  unknownFields,
  type WriteOptions,
} from './neutral.js';
import { readWithListener } from './read.js';

/** The inbound route: `/v1beta/models/{model}:generateContent` or `:streamGenerateContent`. */
const ROUTE = /^\/v1beta\/models\/([^/:]+):(generateContent|streamGenerateContent)$/;

const FunctionDeclaration = z.looseObject({
  name: z.string().min(1),
  description: z.string().nullish(),
  parametersJsonSchema: z.record(z.string(), z.unknown()).nullish(),
  parameters: z.record(z.string(), z.unknown()).nullish(),
});

const ContentSchema = z.looseObject({
  role: z.enum(['user', 'model']).nullish(),
  parts: z.array(z.looseObject({})).min(1, 'parts must not be empty'),
});

const GenerationConfig = z.looseObject({
  temperature: z.number().nullish(),
  topP: z.number().nullish(),
  topK: z.number().int().nonnegative().nullish(),
  maxOutputTokens: z.number().int().positive().nullish(),
  stopSequences: z.array(z.string()).nullish(),
  seed: z.number().int().nullish(),
  candidateCount: z.number().int().positive().nullish(),
  responseMimeType: z.string().nullish(),
  responseJsonSchema: z.record(z.string(), z.unknown()).nullish(),
  responseSchema: z.record(z.string(), z.unknown()).nullish(),
  thinkingConfig: z
    .looseObject({ includeThoughts: z.boolean().nullish(), thinkingBudget: z.number().int().nullish(), thinkingLevel: z.string().nullish() })
    .nullish(),
});

/** A `generateContent` request as the gateway reads it (the model is in the path). */
export const GeminiRequestSchema = z.looseObject({
  contents: z.array(ContentSchema).min(1, 'contents must not be empty'),
  systemInstruction: z.looseObject({ parts: z.array(z.looseObject({})) }).nullish(),
  tools: z.array(z.looseObject({ functionDeclarations: z.array(FunctionDeclaration).nullish() })).nullish(),
  toolConfig: z
    .looseObject({
      functionCallingConfig: z
        .looseObject({ mode: z.enum(['AUTO', 'ANY', 'NONE', 'VALIDATED']).nullish(), allowedFunctionNames: z.array(z.string()).nullish() })
        .nullish(),
    })
    .nullish(),
  generationConfig: GenerationConfig.nullish(),
});

type GeminiRequest = z.infer<typeof GeminiRequestSchema>;

const KNOWN = new Set(['contents', 'systemInstruction', 'tools', 'toolConfig', 'generationConfig']);
const CONFIG_KNOWN = [
  'temperature',
  'topP',
  'topK',
  'maxOutputTokens',
  'stopSequences',
  'seed',
  'responseMimeType',
  'responseJsonSchema',
  'thinkingConfig',
];

const CALL_ID_PREFIX = 'gmc_';

/** The name of the `unknown` bridge event that carries a text part's thought signature (the other writers skip it). */
const TEXT_SIGNATURE = 'gemini.text.thoughtSignature';

/** What a gateway call id made by {@link encodeCallId} holds. */
interface CallIdParts {
  /** The id Gemini gave the call, when it gave one. */
  id?: string;
  /** The `thoughtSignature` of the call's part. */
  signature?: string;
  /** What makes the id unique when Gemini gave none. */
  key?: string;
}

/**
 * A call id that carries the call's Gemini id and thought signature through clients of any protocol: `gmc_` and
 * their JSON in base64url (the characters every protocol's ids allow, Anthropic's `^[a-zA-Z0-9_-]+$` included).
 * A call with an id of Gemini's and no signature keeps its id as is.
 */
export function encodeCallId(parts: CallIdParts): string {
  if (parts.signature === undefined && parts.id !== undefined) return parts.id;
  const bytes = new TextEncoder().encode(JSON.stringify(parts));
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return CALL_ID_PREFIX + btoa(binary).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
}

/** What a call id holds: {@link encodeCallId}'s parts, or the id itself (a call of another protocol's upstream). */
export function decodeCallId(id: string): CallIdParts {
  if (!id.startsWith(CALL_ID_PREFIX)) return { id };
  try {
    const binary = atob(id.slice(CALL_ID_PREFIX.length).replaceAll('-', '+').replaceAll('_', '/'));
    const value: unknown = JSON.parse(new TextDecoder().decode(Uint8Array.from(binary, (c) => c.charCodeAt(0))));
    if (!isRecord(value)) return { id };
    return {
      ...(typeof value.id === 'string' && { id: value.id }),
      ...(typeof value.signature === 'string' && { signature: value.signature }),
    };
  } catch {
    return { id };
  }
}

function match(path: string, query: URLSearchParams): PathRoute | undefined {
  const found = ROUTE.exec(path);
  if (!found?.[1]) return undefined;
  let model: string;
  try {
    model = decodeURIComponent(found[1]);
  } catch {
    throw badRequest('The model in the path is not a valid URL component', 'model');
  }
  if (found[2] === 'generateContent') return { model, stream: false };
  // Without alt=sse Gemini streams one JSON array, which the gateway does not write.
  if (query.get('alt') !== 'sse') throw badRequest('streamGenerateContent is served as SSE only: add ?alt=sse', 'alt');
  return { model, stream: true };
}

/** An `inlineData` image as a `data:` URL; undefined for anything else (audio, PDF, ...). */
function imageOf(blob: unknown): Part | undefined {
  if (!isRecord(blob) || typeof blob.mimeType !== 'string' || typeof blob.data !== 'string') return undefined;
  return blob.mimeType.startsWith('image/') ? { type: 'image', url: `data:${blob.mimeType};base64,${blob.data}` } : undefined;
}

function textOfParts(parts: readonly Record<string, unknown>[]): string {
  return parts
    .filter((part) => typeof part.text === 'string' && part.thought !== true)
    .map((part) => String(part.text))
    .join('');
}

/** The output of a function response: its `output` when it is a string, else the whole response as JSON. */
function outputOf(response: unknown): { output: string; isError: boolean } {
  if (!isRecord(response)) return { output: JSON.stringify(response ?? {}), isError: false };
  if (typeof response.output === 'string' && Object.keys(response).length === 1) return { output: response.output, isError: false };
  if (response.error !== undefined && Object.keys(response).length === 1)
    return { output: typeof response.error === 'string' ? response.error : JSON.stringify(response.error), isError: true };
  return { output: JSON.stringify(response), isError: false };
}

function readTurns(contents: GeminiRequest['contents'], dropped: string[]): Turn[] {
  const turns: Turn[] = [];
  /** The last model turn's calls not yet answered, for the function responses that name only the function. */
  let open: { id: string; apiId: string | undefined; name: string }[] = [];
  for (const [index, content] of contents.entries()) {
    if (content.role === 'model') {
      const turn: Extract<Turn, { role: 'assistant' }> = { role: 'assistant', text: '', reasoning: [], toolCalls: [] };
      open = [];
      for (const [n, part] of content.parts.entries()) {
        const signature = typeof part.thoughtSignature === 'string' ? part.thoughtSignature : undefined;
        if (typeof part.text === 'string' && part.thought === true) {
          // Gemini's own signature, or another vendor's seal that a Gemini client kept in this field.
          const seal = signature === undefined ? undefined : readSeal(signature, 'gemini');
          // A streamed thought comes in pieces, its signature on the last: one reasoning part, as Messages has it.
          const last = turn.reasoning.at(-1);
          if (last && last.seal === undefined && n > 0 && content.parts[n - 1]?.thought === true) {
            last.text += part.text;
            if (seal) last.seal = seal;
          } else turn.reasoning.push({ text: part.text, ...(seal && { seal }) });
        }
        else if (typeof part.text === 'string') {
          turn.text += part.text;
          if (signature !== undefined) turn.textSignature = signature;
        } else if (isRecord(part.functionCall)) {
          const call = part.functionCall;
          const apiId = typeof call.id === 'string' && call.id !== '' ? call.id : undefined;
          const id = encodeCallId({
            ...(apiId !== undefined && { id: apiId }),
            ...(signature !== undefined && { signature }),
            ...(apiId === undefined && { key: `${index}:${n}` }),
          });
          const name = String(call.name ?? '');
          turn.toolCalls.push({ id, name, arguments: JSON.stringify(call.args ?? {}) });
          open.push({ id, apiId, name });
        } else dropped.push(`contents[].parts[].${Object.keys(part)[0] ?? 'empty'}`);
      }
      turns.push(turn);
      continue;
    }
    const parts: Part[] = [];
    for (const part of content.parts) {
      if (isRecord(part.functionResponse)) {
        const response = part.functionResponse;
        const apiId = typeof response.id === 'string' ? response.id : undefined;
        const at = open.findIndex((call) => (apiId !== undefined ? call.apiId === apiId || call.id === apiId : call.name === response.name));
        const call = at >= 0 ? open.splice(at, 1)[0] : undefined;
        if (!call) throw badRequest(`A functionResponse for "${String(response.name)}" answers no functionCall of the turn before`, 'contents');
        turns.push({ role: 'tool', callId: call.id, ...outputOf(response.response) });
      } else if (typeof part.text === 'string') parts.push({ type: 'text', text: part.text });
      else {
        const image = imageOf(part.inlineData);
        if (image) parts.push(image);
        else dropped.push(`contents[].parts[].${Object.keys(part)[0] ?? 'empty'}`);
      }
    }
    if (parts.length) turns.push({ role: 'user', parts });
  }
  return turns;
}

function readTools(tools: GeminiRequest['tools'], dropped: string[]): ToolSpec[] {
  const out: ToolSpec[] = [];
  for (const tool of tools ?? []) {
    for (const key of Object.keys(tool)) if (key !== 'functionDeclarations') dropped.push(`tools[].${key}`);
    for (const declaration of tool.functionDeclarations ?? []) {
      // `parameters` is the OpenAPI subset: a JSON Schema with upper-case types, which the JSON Schema form reads.
      const parameters = declaration.parametersJsonSchema ?? (declaration.parameters ? lowerTypes(declaration.parameters) : undefined);
      out.push({
        name: declaration.name,
        ...(typeof declaration.description === 'string' && { description: declaration.description }),
        parameters: isRecord(parameters) ? parameters : { type: 'object', properties: {} },
      });
    }
  }
  return out;
}

/** An OpenAPI-subset schema (`type: 'OBJECT'`) as JSON Schema (`type: 'object'`). */
function lowerTypes(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(lowerTypes);
  if (!isRecord(schema)) return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema))
    out[key] = key === 'type' && typeof value === 'string' ? value.toLowerCase() : lowerTypes(value);
  return out;
}

function readToolChoice(config: GeminiRequest['toolConfig'], dropped: string[]): ToolChoice | undefined {
  const calling = config?.functionCallingConfig;
  dropped.push(...uncarriedKeys('toolConfig', config, ['functionCallingConfig']));
  if (!calling?.mode) return undefined;
  const names = calling.allowedFunctionNames ?? [];
  if (calling.mode === 'NONE') return 'none';
  if (calling.mode === 'ANY') {
    if (names.length === 1 && names[0]) return { name: names[0] };
    if (names.length > 1) dropped.push('toolConfig.functionCallingConfig.allowedFunctionNames');
    return 'required';
  }
  if (calling.mode === 'VALIDATED') dropped.push('toolConfig.functionCallingConfig.mode=VALIDATED');
  return 'auto';
}

function readFormat(config: z.infer<typeof GenerationConfig> | null | undefined): ResponseFormat | undefined {
  if (config?.responseMimeType !== 'application/json') return undefined;
  const schema = config.responseJsonSchema ?? (config.responseSchema ? lowerTypes(config.responseSchema) : undefined);
  return isRecord(schema) ? { type: 'json_schema', name: 'output', schema } : { type: 'json_object' };
}

/** The effort a thinking budget or level stands for; undefined when thinking is off or left to the model. */
function effortOf(thinking: z.infer<typeof GenerationConfig>['thinkingConfig']): GatewayRequest['reasoningEffort'] {
  const level = thinking?.thinkingLevel?.toLowerCase();
  if (level === 'minimal' || level === 'low' || level === 'medium' || level === 'high') return level;
  const budget = thinking?.thinkingBudget;
  if (budget === undefined || budget === null || budget <= 0) return undefined;
  if (budget <= EFFORT_BUDGETS.minimal) return 'minimal';
  if (budget <= EFFORT_BUDGETS.low) return 'low';
  return budget <= EFFORT_BUDGETS.medium ? 'medium' : 'high';
}

function parse(json: unknown, route?: PathRoute): GatewayRequest {
  if (!route) throw badRequest('The model goes in the path: /v1beta/models/{model}:generateContent', 'model');
  const body = parseBody(GeminiRequestSchema, json);
  const dropped = unknownFields(body, KNOWN);
  const config = body.generationConfig;
  dropped.push(...uncarriedKeys('generationConfig', config, [...CONFIG_KNOWN, 'responseSchema']));
  dropped.push(...uncarriedKeys('generationConfig.thinkingConfig', config?.thinkingConfig, ['includeThoughts', 'thinkingBudget', 'thinkingLevel']));
  if (config?.responseMimeType && !['application/json', 'text/plain'].includes(config.responseMimeType))
    dropped.push(`generationConfig.responseMimeType=${config.responseMimeType}`);
  const turns = readTurns(body.contents, dropped);
  if (!turns.some((turn) => turn.role === 'user' || turn.role === 'tool'))
    throw badRequest('contents must contain a user turn', 'contents');
  const system = body.systemInstruction ? textOfParts(body.systemInstruction.parts) : undefined;
  return {
    protocol: 'gemini',
    model: route.model,
    stream: route.stream,
    system: system || undefined,
    turns,
    tools: readTools(body.tools, dropped),
    toolChoice: readToolChoice(body.toolConfig, dropped),
    maxTokens: config?.maxOutputTokens ?? undefined,
    temperature: config?.temperature ?? undefined,
    topP: config?.topP ?? undefined,
    stop: config?.stopSequences ?? undefined,
    seed: config?.seed ?? undefined,
    topK: config?.topK ?? undefined,
    parallelToolCalls: undefined,
    user: undefined,
    serviceTier: undefined,
    responseFormat: readFormat(config),
    cacheControl: undefined,
    reasoningEffort: effortOf(config?.thinkingConfig),
    includeUsage: true,
    sessionId: undefined,
    raw: body,
    dropped,
  };
}

function inlinePart(url: string): GeminiPart {
  const data = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  if (data) return { inlineData: { mimeType: data[1] ?? '', data: data[2] ?? '' } };
  return { fileData: { fileUri: url } };
}

/** A `generateContent` body for an upstream: the function calls with their signatures and ids restored. */
function body(request: GatewayRequest, _model: string): Record<string, unknown> {
  const contents: { role: 'user' | 'model'; parts: GeminiPart[] }[] = [];
  const user = (parts: GeminiPart[]) => {
    const last = contents.at(-1);
    if (last?.role === 'user') last.parts.push(...parts);
    else contents.push({ role: 'user', parts });
  };
  const calls = new Map<string, { name: string; id: string | undefined }>();
  for (const turn of request.turns) {
    if (turn.role === 'user') user(turn.parts.map((part) => (part.type === 'text' ? { text: part.text } : inlinePart(part.url))));
    else if (turn.role === 'tool') {
      const call = calls.get(turn.callId);
      const response: GeminiPart['functionResponse'] = {
        name: call?.name ?? '',
        response: turn.isError ? { error: turn.output } : { output: turn.output },
      };
      if (call?.id !== undefined) response.id = call.id;
      user([{ functionResponse: response }]);
    } else {
      const parts: GeminiPart[] = [];
      // A thought goes back only with Gemini's signature: without one it is the model's text to nobody.
      for (const part of turn.reasoning) {
        const seal = sealFor(part, 'gemini');
        if (seal) parts.push({ text: part.text, thought: true, thoughtSignature: seal.value });
      }
      if (turn.text || turn.textSignature !== undefined)
        parts.push({ text: turn.text, ...(turn.textSignature !== undefined && { thoughtSignature: turn.textSignature }) });
      for (const call of turn.toolCalls) {
        const { id, signature } = decodeCallId(call.id);
        calls.set(call.id, { name: call.name, id });
        parts.push({
          functionCall: { ...(id !== undefined && { id }), name: call.name, args: argsOf(call.arguments) },
          ...(signature !== undefined && { thoughtSignature: signature }),
        });
      }
      if (parts.length) contents.push({ role: 'model', parts });
    }
  }
  const out: Record<string, unknown> = { contents };
  if (request.system !== undefined) out.systemInstruction = { parts: [{ text: request.system }] };
  if (request.tools.length)
    out.tools = [
      {
        functionDeclarations: request.tools.map((tool) => ({
          name: tool.name,
          ...(tool.description !== undefined && { description: tool.description }),
          parametersJsonSchema: tool.parameters,
        })),
      },
    ];
  const choice = request.toolChoice;
  if (choice !== undefined && request.tools.length)
    out.toolConfig = {
      functionCallingConfig:
        typeof choice === 'object'
          ? { mode: 'ANY', allowedFunctionNames: [choice.name] }
          : { mode: choice === 'required' ? 'ANY' : choice === 'none' ? 'NONE' : 'AUTO' },
    };
  const config: Record<string, unknown> = {};
  if (request.maxTokens !== undefined) config.maxOutputTokens = request.maxTokens;
  if (request.temperature !== undefined) config.temperature = request.temperature;
  if (request.topP !== undefined) config.topP = request.topP;
  if (carries(geminiCodec, request, 'topK')) config.topK = request.topK;
  if (carries(geminiCodec, request, 'stop')) config.stopSequences = request.stop;
  if (carries(geminiCodec, request, 'seed')) config.seed = request.seed;
  const format = request.responseFormat;
  if (format && carries(geminiCodec, request, 'responseFormat')) {
    config.responseMimeType = 'application/json';
    if (format.type === 'json_schema') config.responseJsonSchema = format.schema;
  }
  if (request.reasoningEffort !== undefined)
    config.thinkingConfig = { includeThoughts: true, thinkingBudget: EFFORT_BUDGETS[request.reasoningEffort] };
  if (Object.keys(config).length) out.generationConfig = config;
  return out;
}

function argsOf(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    return isRecord(value) ? value : {};
  } catch {
    return {};
  }
}

/** Google's status name for an HTTP status. */
function statusName(status: number): string {
  const names: Record<number, string> = {
    400: 'INVALID_ARGUMENT',
    401: 'UNAUTHENTICATED',
    403: 'PERMISSION_DENIED',
    404: 'NOT_FOUND',
    405: 'INVALID_ARGUMENT',
    408: 'DEADLINE_EXCEEDED',
    413: 'INVALID_ARGUMENT',
    429: 'RESOURCE_EXHAUSTED',
    499: 'CANCELLED',
    501: 'UNIMPLEMENTED',
    503: 'UNAVAILABLE',
    504: 'DEADLINE_EXCEEDED',
  };
  return names[status] ?? (status >= 500 ? 'INTERNAL' : 'FAILED_PRECONDITION');
}

/** A failure after the answer began: Gemini's error object as one more SSE chunk, as its API ends a stream. */
function streamError(error: GatewayErrorObject): SseMessage {
  return { data: JSON.stringify({ error: { code: 500, message: error.message, status: 'INTERNAL' } }) };
}

function errorBody(status: number, error: GatewayErrorObject) {
  return { error: { code: status, message: error.message, status: statusName(status) } };
}

/** The shared finish reasons in Gemini's vocabulary; a reason Gemini named itself passes through. */
export function geminiFinishReason(reason: FinishReason): string {
  const reasons: Record<string, string> = { stop: 'STOP', tool_calls: 'STOP', length: 'MAX_TOKENS', content_filter: 'SAFETY' };
  return reasons[reason] ?? reason;
}

function usageMetadata(usage: Usage | undefined): Record<string, number> {
  const thoughts = usage?.completion_tokens_details?.reasoning_tokens;
  const cached = usage?.prompt_tokens_details?.cached_tokens;
  const prompt = usage?.prompt_tokens ?? 0;
  const completion = usage?.completion_tokens ?? 0;
  return {
    promptTokenCount: prompt,
    candidatesTokenCount: completion - (thoughts ?? 0),
    ...(typeof thoughts === 'number' && thoughts > 0 && { thoughtsTokenCount: thoughts }),
    ...(typeof cached === 'number' && { cachedContentTokenCount: cached }),
    totalTokenCount: usage?.total_tokens ?? prompt + completion,
  };
}

/** The part of a client tool call: its arguments as an object, its Gemini id and signature restored. */
function callPart(id: string, name: string, args: string): GeminiPart {
  const decoded = decodeCallId(id);
  return {
    functionCall: { ...(decoded.id !== undefined && { id: decoded.id }), name, args: argsOf(args) },
    ...(decoded.signature !== undefined && { thoughtSignature: decoded.signature }),
  };
}

/** What one event adds to the answer's parts; undefined for events that add none. */
function partOf(event: BridgeEvent, options: WriteOptions): GeminiPart | undefined {
  switch (event.type) {
    case 'content':
      return { text: event.delta };
    case 'reasoning':
      return { text: event.delta, thought: true };
    case 'reasoning.signature':
      return { text: '', thought: true, thoughtSignature: sealText(sealOf(event), 'gemini') };
    case 'tool_call.done':
      return options.toolCalls === 'client' ? callPart(event.id, event.name, event.arguments) : undefined;
    case 'unknown':
      return event.name === TEXT_SIGNATURE && typeof event.data === 'string' ? { text: '', thoughtSignature: event.data } : undefined;
    default:
      return undefined;
  }
}

function chunk(parts: GeminiPart[], shell: { responseId: string; modelVersion: string }, extra: Record<string, unknown> = {}) {
  return { candidates: [{ content: { role: 'model', parts }, index: 0, ...extra }], ...shell };
}

/** Bridge events to Gemini SSE: one chunk per new part, the last with the finishReason and the usage. */
async function* toGeminiSse(events: AsyncIterable<BridgeEvent>, options: WriteOptions): AsyncGenerator<SseMessage> {
  const state = new CompletionBuilder({ model: options.model, toolCalls: options.toolCalls });
  const shell = { responseId: newId('gmr'), modelVersion: options.model };
  let began = false;
  try {
    for await (const event of events) {
      if (event.type === 'error') throw event.error;
      state.add(event);
      const part = partOf(event, options);
      if (!part) continue;
      began = true;
      yield { data: JSON.stringify(chunk([part], shell)) };
    }
  } catch (error) {
    if (!began) throw error;
    yield streamError(openAIErrorObject(error));
    return;
  }
  const last = chunk([{ text: '' }], shell, { finishReason: geminiFinishReason(state.finalReason) });
  yield { data: JSON.stringify({ ...last, usageMetadata: usageMetadata(state.usage) }) };
}

/** Bridge events to one `GenerateContentResponse`: consecutive text (and thought) parts joined. */
async function toGenerateContentResponse(events: AsyncIterable<BridgeEvent>, options: WriteOptions) {
  const state = new CompletionBuilder({ model: options.model, toolCalls: options.toolCalls });
  const parts: GeminiPart[] = [];
  for await (const event of events) {
    if (event.type === 'error') throw event.error;
    state.add(event);
    const part = partOf(event, options);
    if (!part) continue;
    const last = parts.at(-1);
    // Text joins the text part before it, unless a signature ended that one.
    if (
      last !== undefined &&
      typeof last.text === 'string' &&
      typeof part.text === 'string' &&
      last.thoughtSignature === undefined &&
      (last.thought === true) === (part.thought === true)
    ) {
      last.text += part.text;
      if (part.thoughtSignature !== undefined) last.thoughtSignature = part.thoughtSignature;
    } else parts.push(part);
  }
  const shell = { responseId: newId('gmr'), modelVersion: options.model };
  return {
    ...chunk(parts.length ? parts : [{ text: '' }], shell, { finishReason: geminiFinishReason(state.finalReason) }),
    usageMetadata: usageMetadata(state.usage),
  };
}

/**
 * A Gemini upstream's answer as bridge events: the listener's, each call's id made by {@link encodeCallId} from its
 * Gemini id and the signature of its part, a thought part's signature as a `reasoning.signature` event.
 */
async function* readGemini(response: Response, options: Parameters<ProtocolCodec['read']>[1]): AsyncGenerator<BridgeEvent> {
  /** The calls' Gemini ids and signatures in order, for the listener's calls as they come. */
  const calls: { id?: string; signature?: string }[] = [];
  const peek = (sse: SseEvent): BridgeEvent[] | undefined => {
    if (!sse.data.includes('thoughtSignature') && !sse.data.includes('functionCall')) return undefined;
    const signatures: BridgeEvent[] = [];
    for (const part of partsOf(sse.data)) {
      const signature = typeof part.thoughtSignature === 'string' ? part.thoughtSignature : undefined;
      if (isRecord(part.functionCall) && typeof part.functionCall.name === 'string')
        calls.push({
          ...(typeof part.functionCall.id === 'string' && part.functionCall.id !== '' && { id: part.functionCall.id }),
          ...(signature !== undefined && { signature }),
        });
      else if (signature === undefined || typeof part.text !== 'string') continue;
      else if (part.thought === true) signatures.push({ type: 'reasoning.signature', signature, origin: 'gemini' });
      else signatures.push({ type: 'unknown', name: TEXT_SIGNATURE, data: signature });
    }
    return signatures;
  };
  const ids = new Map<string, string>();
  const events = readWithListener(GEMINI_PROTOCOL.createListener(undefined, options.quirks), GEMINI_PROTOCOL, response, {
    ...options,
    peek,
  });
  for await (const event of events) {
    if (event.type === 'tool_call.start') {
      const call = calls.shift() ?? {};
      const id = encodeCallId({ ...call, ...(call.id === undefined && { key: event.id }) });
      ids.set(event.id, id);
      yield { ...event, id };
    } else if (event.type === 'tool_call.delta' || event.type === 'tool_call.done')
      yield { ...event, id: ids.get(event.id) ?? event.id };
    else yield event;
  }
}

/** The parts of a chunk's first candidate (what the gateway answers with); none when the data is not a chunk. */
function partsOf(data: string): Record<string, unknown>[] {
  let chunk: unknown;
  try {
    chunk = JSON.parse(data);
  } catch {
    return [];
  }
  const candidate = isRecord(chunk) && Array.isArray(chunk.candidates) ? chunk.candidates[0] : undefined;
  const content = isRecord(candidate) ? candidate.content : undefined;
  return isRecord(content) && Array.isArray(content.parts) ? content.parts.filter(isRecord) : [];
}

/** Gemini's `generateContent`, in and out. */
export const geminiCodec: ProtocolCodec = {
  name: 'gemini',
  path: GEMINI_PROTOCOL.path,
  match,
  endpoint: (model) => {
    const { path, query } = GEMINI_PROTOCOL.endpoint?.({ model }, true) ?? { path: GEMINI_PROTOCOL.path };
    return { path, ...(query && { query }) };
  },
  parse,
  fields: {
    stop: 'generationConfig.stopSequences',
    seed: 'generationConfig.seed',
    topK: 'generationConfig.topK',
    parallelToolCalls: undefined,
    user: undefined,
    serviceTier: undefined,
    responseFormat: 'generationConfig.responseJsonSchema',
    // Gemini caches by `cachedContent`, made beforehand: no marker.
    cacheControl: undefined,
  },
  errorBody,
  streamError,
  stream: toGeminiSse,
  // @google/genai skips an event that does not start with `data:`.
  eventIds: false,
  aggregate: toGenerateContentResponse,
  body,
  upstreamHeaders: {},
  read: readGemini,
};
