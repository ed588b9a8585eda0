/**
 * Gemini's `generateContent` as the scripted model answers it, written from Google's documents and recorded streams:
 * one scripted turn becomes a `GenerateContentResponse`, or the SSE chunks of `streamGenerateContent?alt=sse` (each a
 * response holding the new parts; the last with the finishReason and the usage). The requests are checked the way
 * the real API checks them: unknown body fields, a `functionResponse` turn that does not answer the model turn
 * before it, and (for Gemini 3 models) a function-call turn sent back without its thought signature.
 */
import type { SseMessage } from '@ai4ts/sse';
import { splitText } from './fragment.js';
import { isRecord, type MockTurn, type RenderContext, type ResolvedTurn, randomId, usageDetail } from './turn.js';

/** A part of a Gemini request or answer. */
export interface GeminiPart {
  text?: string;
  thought?: boolean;
  thoughtSignature?: string;
  functionCall?: { id?: string; name: string; args?: Record<string, unknown> };
  functionResponse?: { id?: string; name: string; response: unknown };
  [key: string]: unknown;
}

/** A turn of a Gemini request. */
export interface GeminiContent {
  role?: string;
  parts: GeminiPart[];
}

/** The body of a `generateContent` request (the model is in the URL). */
export interface GeminiRequestBody {
  /** Never here: Gemini reads the model from the URL (a script finds it in `context.model`). */
  model?: never;
  contents: GeminiContent[];
  systemInstruction?: unknown;
  tools?: unknown[];
  toolConfig?: unknown;
  generationConfig?: Record<string, unknown>;
  [key: string]: unknown;
}

/** The body fields the API knows; any other is a 400 (`Invalid JSON payload received. Unknown name`). */
const FIELDS = new Set([
  'contents',
  'systemInstruction',
  'tools',
  'toolConfig',
  'generationConfig',
  'safetySettings',
  'cachedContent',
  'labels',
]);

/** The route of a Gemini request: `/v1beta/models/{model}:{method}`. */
export function geminiRoute(path: string): { model: string; method: string } | undefined {
  const match = /^\/v1beta\/models\/([^/:]+):([A-Za-z]+)$/.exec(path);
  if (!match) return undefined;
  return { model: decodeURIComponent(match[1] as string), method: match[2] as string };
}

/** A Google error body: `{ error: { code, message, status } }`. */
export function geminiError(code: number, message: string) {
  const statuses: Record<number, string> = {
    400: 'INVALID_ARGUMENT',
    401: 'UNAUTHENTICATED',
    403: 'PERMISSION_DENIED',
    404: 'NOT_FOUND',
    429: 'RESOURCE_EXHAUSTED',
    500: 'INTERNAL',
    503: 'UNAVAILABLE',
  };
  return { error: { code, message, status: statuses[code] ?? (code >= 500 ? 'INTERNAL' : 'INVALID_ARGUMENT') } };
}

/** Whether `model` is a Gemini 3 model: thought signatures on function calls are required there. */
function signaturesRequired(model: string): boolean {
  return /^gemini-3/.test(model);
}

/**
 * What the real API rejects in a request body, as its 400 message; undefined for a body it takes. `issued` holds
 * every thought signature the server gave (a Gemini 3 signature that is not one of them is corrupt).
 */
export function geminiRequestProblem(body: unknown, model: string, issued: ReadonlySet<string>): string | undefined {
  if (!isRecord(body)) return 'Invalid JSON payload received: the body must be a JSON object';
  for (const key of Object.keys(body)) {
    if (!FIELDS.has(key)) return `Invalid JSON payload received. Unknown name "${key}": Cannot find field.`;
  }
  if (!Array.isArray(body.contents) || body.contents.length === 0) return '* GenerateContentRequest.contents: contents is not specified';
  const contents = body.contents as unknown[];
  for (const [index, content] of contents.entries()) {
    if (!isRecord(content) || !Array.isArray(content.parts) || !content.parts.every(isRecord)) {
      return `* GenerateContentRequest.contents[${index}].parts: contents.parts must not be empty.`;
    }
    if (content.role !== undefined && content.role !== 'user' && content.role !== 'model') {
      return `Please use a valid role: user, model.`;
    }
    const parts = content.parts as GeminiPart[];
    const responses = parts.filter((part) => isRecord(part.functionResponse));
    if (responses.length > 0) {
      const previous = contents[index - 1];
      const calls = isRecord(previous) && previous.role === 'model' && Array.isArray(previous.parts)
        ? (previous.parts as GeminiPart[]).filter((part) => isRecord(part.functionCall))
        : [];
      if (calls.length === 0) return 'Please ensure that function response turn comes immediately after a function call turn.';
      if (calls.length !== responses.length) {
        return 'Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.';
      }
      for (const part of responses) {
        const response = part.functionResponse as NonNullable<GeminiPart['functionResponse']>;
        const call = calls.find(
          (c) => c.functionCall?.name === response.name && (response.id === undefined || c.functionCall?.id === response.id),
        );
        if (!call) return `Function response for "${String(response.name)}" does not match a function call of the previous turn.`;
      }
    }
    if (content.role === 'model' && signaturesRequired(model)) {
      const first = parts.find((part) => isRecord(part.functionCall));
      if (first && first.thoughtSignature === undefined) {
        return `Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly. Additional data, function call \`${String(first.functionCall?.name)}\`, position ${index + 1}.`;
      }
      for (const part of parts) {
        if (part.thoughtSignature !== undefined && !issued.has(part.thoughtSignature)) return 'Corrupted thought signature.';
      }
    }
  }
  return undefined;
}

/**
 * The turn as a Gemini server answers it: a refusal is a SAFETY stop with the refusal as `finishMessage`; other
 * fields as scripted.
 */
export function geminiTurn(turn: MockTurn): MockTurn {
  if (turn.refusal === undefined) return turn;
  return { ...turn, refusal: undefined, finishReason: 'SAFETY', finishMessage: turn.refusal };
}

/** How one request is rendered: its model, and the tool call ids the script gave (Gemini sends no id otherwise). */
export interface GeminiRender {
  model: string;
  scriptedIds: ReadonlySet<string>;
  /** Every signature given is added here, so a later request can be checked against them. */
  issued: Set<string>;
  /** The scripted turn (for the fields only Gemini has: `blockReason`, `finishMessage`). */
  scripted: MockTurn;
}

/** The parts of the answer, in order, and where the thought signature goes. */
function partsOf(turn: ResolvedTurn, body: GeminiRequestBody, render: GeminiRender, random: () => number): GeminiPart[] {
  const thinking = isRecord(body.generationConfig?.thinkingConfig) ? body.generationConfig.thinkingConfig : {};
  // Drawn first, so the stream and the JSON of one seed agree.
  const signed = turn.reasoning !== '' || signaturesRequired(render.model);
  const signature = signed ? (turn.signature ?? `Cs${randomId(random, 86)}`) : undefined;
  if (signature !== undefined) render.issued.add(signature);
  const parts: GeminiPart[] = [];
  if (turn.reasoning && thinking.includeThoughts === true) parts.push({ text: turn.reasoning, thought: true });
  if (turn.content) parts.push({ text: turn.content });
  for (const call of turn.toolCalls) {
    const functionCall: NonNullable<GeminiPart['functionCall']> = { name: call.name, args: parseArgs(call.arguments) };
    if (render.scriptedIds.has(call.id)) functionCall.id = call.id;
    parts.push({ functionCall });
  }
  if (signature !== undefined) {
    // On the first function call of the turn; else on the last part (an empty text part when there is none).
    const target = parts.find((part) => part.functionCall !== undefined) ?? parts[parts.length - 1];
    if (target && target.thought !== true) target.thoughtSignature = signature;
    else parts.push({ text: '', thoughtSignature: signature });
  }
  return parts;
}

/** The non-streamed answer: one `GenerateContentResponse`. */
export function geminiResponse(turn: ResolvedTurn, body: GeminiRequestBody, context: RenderContext, render: GeminiRender) {
  const blocked = render.scripted.blockReason;
  if (blocked !== undefined) return blockedResponse(blocked, turn, context, render);
  return {
    candidates: [candidateOf(partsOf(turn, body, render, context.random), turn, render)],
    usageMetadata: usageOf(turn),
    modelVersion: render.model,
    responseId: context.id,
  };
}

/**
 * The streamed answer: thoughts, then text, in chunks of 1-6 characters, each chunk a response of its new parts;
 * each function call whole in its own chunk (the Gemini API does not stream arguments); a text turn's signature on a
 * last empty text part, as recorded streams show; the finishReason and the final usage on the last chunk. With
 * `streamError`, an `{ error }` chunk replaces the last one.
 */
export function geminiEvents(
  turn: ResolvedTurn,
  body: GeminiRequestBody,
  context: RenderContext,
  render: GeminiRender,
  streamError?: MockTurn['streamError'],
): SseMessage[] {
  const blocked = render.scripted.blockReason;
  if (blocked !== undefined) return [{ data: JSON.stringify(blockedResponse(blocked, turn, context, render)) }];
  const parts = partsOf(turn, body, render, context.random);
  const chunks: GeminiPart[][] = [];
  for (const part of parts) {
    if (typeof part.text === 'string' && part.text !== '') {
      const pieces = splitText(part.text, context.random, 1, 6);
      pieces.forEach((text, i) => {
        const last = i === pieces.length - 1;
        const piece: GeminiPart = { ...part, text };
        if (!last) delete piece.thoughtSignature;
        // A text part's signature comes on its own empty chunk, after the text.
        if (last && part.thoughtSignature !== undefined && part.functionCall === undefined) {
          delete piece.thoughtSignature;
          chunks.push([piece]);
          chunks.push([{ text: '', thoughtSignature: part.thoughtSignature }]);
        } else chunks.push([piece]);
      });
    } else chunks.push([part]);
  }
  const shell = { modelVersion: render.model, responseId: context.id };
  const events: SseMessage[] = chunks.map((chunkParts) => ({
    data: JSON.stringify({
      candidates: [{ content: { role: 'model', parts: chunkParts }, index: 0 }],
      usageMetadata: { promptTokenCount: turn.usage.prompt_tokens },
      ...shell,
    }),
  }));
  if (streamError) {
    const status = streamError.type ?? 'INTERNAL';
    events.push({ data: JSON.stringify({ error: { code: 500, message: streamError.message, status } }) });
    return events;
  }
  const last = candidateOf([{ text: '' }], turn, render);
  events.push({ data: JSON.stringify({ candidates: [last], usageMetadata: usageOf(turn), ...shell }) });
  return events;
}

function candidateOf(parts: GeminiPart[], turn: ResolvedTurn, render: GeminiRender) {
  const finishReason = finishReasonOf(turn.finishReason);
  const candidate: Record<string, unknown> = { content: { role: 'model', parts }, finishReason, index: 0 };
  if (finishReason === 'SAFETY') {
    candidate.safetyRatings = [{ category: 'HARM_CATEGORY_DANGEROUS_CONTENT', probability: 'HIGH', blocked: true }];
  }
  if (render.scripted.finishMessage !== undefined) candidate.finishMessage = render.scripted.finishMessage;
  return candidate;
}

function blockedResponse(blockReason: string, turn: ResolvedTurn, context: RenderContext, render: GeminiRender) {
  return {
    promptFeedback: {
      blockReason,
      safetyRatings: [{ category: 'HARM_CATEGORY_HARASSMENT', probability: 'HIGH', blocked: true }],
    },
    usageMetadata: { promptTokenCount: turn.usage.prompt_tokens, totalTokenCount: turn.usage.prompt_tokens },
    modelVersion: render.model,
    responseId: context.id,
  };
}

/** Chat's finish reasons in Gemini's vocabulary (a function-call turn stops with STOP); anything else as given. */
function finishReasonOf(finishReason: string): string {
  const reasons: Record<string, string> = { stop: 'STOP', tool_calls: 'STOP', length: 'MAX_TOKENS', content_filter: 'SAFETY' };
  return reasons[finishReason] ?? finishReason;
}

function usageOf(turn: ResolvedTurn) {
  const { usage } = turn;
  const thoughts = usageDetail(usage, 'completion_tokens_details', 'reasoning_tokens');
  const cached = usageDetail(usage, 'prompt_tokens_details', 'cached_tokens');
  return {
    promptTokenCount: usage.prompt_tokens,
    candidatesTokenCount: usage.completion_tokens - thoughts,
    ...(thoughts ? { thoughtsTokenCount: thoughts } : {}),
    ...(cached ? { cachedContentTokenCount: cached } : {}),
    totalTokenCount: usage.total_tokens,
  };
}

/** The text the usage estimate counts: system instruction and contents. */
export function geminiPrompt(body: GeminiRequestBody): string {
  return JSON.stringify([body.systemInstruction ?? '', body.contents]);
}

/** A functionCall's `args` is an object; arguments that are not a JSON object become `{}`. */
function parseArgs(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    return isRecord(value) ? value : {};
  } catch {
    return {};
  }
}
