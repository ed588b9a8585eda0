/**
 * The wire types of Gemini's `generateContent` (Google AI Studio's REST API, v1beta), with the names of Google's
 * `@google/genai` SDK. Every object may carry fields not listed here: they are kept as sent.
 */
import type { SdkFields } from '@ai4ts/core';

/** A JSON Schema, as sent. */
type JsonSchema = Record<string, unknown>;

/** A function the model asked to call. `id` is sent by some models; ai4ts makes one for the loop when absent. */
export interface FunctionCall {
  id?: string;
  name?: string;
  args?: Record<string, unknown>;
  [key: string]: unknown;
}

/** One argument fragment of a streamed function call (Vertex AI's `streamFunctionCallArguments`). */
export interface PartialArg {
  /** Where the value goes: `$.location`, `$.items[0].name`. */
  jsonPath: string;
  stringValue?: string | null;
  numberValue?: number | null;
  boolValue?: boolean | null;
  nullValue?: unknown;
  /** A string value continues in the next fragment of the same path. */
  willContinue?: boolean | null;
}

/** A function call as streamed: its fragments (`partialArgs`) continue while `willContinue` is true. */
export interface StreamedFunctionCall extends FunctionCall {
  partialArgs?: PartialArg[];
  willContinue?: boolean;
}

/** The result of a function call, sent back in a user turn. */
export interface FunctionResponse {
  id?: string;
  name: string;
  response: Record<string, unknown>;
  [key: string]: unknown;
}

/** Bytes inline (base64). */
export interface Blob {
  mimeType: string;
  data: string;
}

/** Code the model wrote for the code-execution tool. */
export interface ExecutableCode {
  language: string;
  code: string;
}

/** What the code-execution tool printed. */
export interface CodeExecutionResult {
  outcome: string;
  output?: string;
}

/**
 * One part of a turn. Gemini tags a part by the one field it has (`text`, `functionCall`, ...), not by a `type`;
 * `thought: true` marks a text part as the model's reasoning, and `thoughtSignature` (opaque) must go back with the
 * part it came with on every later turn.
 */
export interface Part {
  text?: string;
  thought?: boolean;
  thoughtSignature?: string;
  functionCall?: FunctionCall;
  functionResponse?: FunctionResponse;
  inlineData?: Blob;
  fileData?: { mimeType?: string; fileUri: string };
  executableCode?: ExecutableCode;
  codeExecutionResult?: CodeExecutionResult;
  [key: string]: unknown;
}

/** A part holding text (an answer, or a thought when `thought` is true). */
export type TextPart = Part & { text: string };
/** A part holding a function call. */
export type FunctionCallPart = Part & { functionCall: FunctionCall };

/** Whether a part holds text. */
export function isTextPart(part: Part): part is TextPart {
  return typeof part.text === 'string';
}

/** Whether a part holds a function call. */
export function isFunctionCallPart(part: Part): part is FunctionCallPart {
  return typeof part.functionCall === 'object' && part.functionCall !== null;
}

/** One turn of the conversation: `user` (with function responses) or `model`. */
export interface Content {
  role?: 'user' | 'model' | (string & {});
  parts: Part[];
}

/** A function the model may call: its parameters as JSON Schema. */
export interface FunctionDeclaration {
  name: string;
  description?: string;
  parametersJsonSchema?: JsonSchema;
  /** The OpenAPI subset form; `parametersJsonSchema` is the JSON Schema one. */
  parameters?: Record<string, unknown>;
  [key: string]: unknown;
}

/** A tool: function declarations, or one of Google's built-in tools (`googleSearch`, `codeExecution`, ...). */
export interface GeminiTool {
  functionDeclarations?: FunctionDeclaration[];
  [key: string]: unknown;
}

/** How the model may call functions. */
export interface ToolConfig {
  functionCallingConfig?: {
    mode?: 'AUTO' | 'ANY' | 'NONE' | 'VALIDATED' | (string & {});
    allowedFunctionNames?: string[];
    [key: string]: unknown;
  };
  [key: string]: unknown;
}

/** Thinking: a token budget (Gemini 2.5) or a level (Gemini 3), and whether thoughts come back as parts. */
export interface ThinkingConfig {
  includeThoughts?: boolean;
  thinkingBudget?: number;
  thinkingLevel?: 'LOW' | 'MEDIUM' | 'HIGH' | 'MINIMAL' | (string & {});
  [key: string]: unknown;
}

/** Sampling and output options. */
export interface GenerationConfig {
  temperature?: number;
  topP?: number;
  topK?: number;
  candidateCount?: number;
  maxOutputTokens?: number;
  stopSequences?: string[];
  responseMimeType?: string;
  responseJsonSchema?: JsonSchema;
  responseSchema?: Record<string, unknown>;
  thinkingConfig?: ThinkingConfig;
  [key: string]: unknown;
}

/** A safety filter setting. */
export interface SafetySetting {
  category: string;
  threshold: string;
}

/**
 * A `generateContent` request. `model` (`gemini-2.5-flash`, or `models/gemini-2.5-flash`) goes in the URL, not the
 * body; every other field is the API's.
 */
export interface GenerateContentRequest extends SdkFields {
  model: string;
  contents: Content[];
  systemInstruction?: Content;
  tools?: GeminiTool[];
  toolConfig?: ToolConfig;
  generationConfig?: GenerationConfig;
  safetySettings?: SafetySetting[];
  cachedContent?: string;
}
/**
 * Every field of {@link GenerateContentRequest}, for the `strictRequests` check: typed by the request type's keys, so
 * a field added to the type and not here (or the reverse) fails to compile.
 */
const GEMINI_REQUEST_FIELDS_RECORD: Record<keyof GenerateContentRequest, true> = {
  model: true, contents: true, systemInstruction: true, tools: true, toolConfig: true, generationConfig: true,
  safetySettings: true, cachedContent: true, telemetry: true,
};

/** The names of {@link GenerateContentRequest}'s fields (`telemetry` included). */
export const GEMINI_REQUEST_FIELDS: ReadonlySet<string> = new Set(Object.keys(GEMINI_REQUEST_FIELDS_RECORD));


/**
 * Why a candidate stopped. `STOP` is also the reason of a turn that calls functions; `MALFORMED_FUNCTION_CALL`, the
 * filters' reasons and `OTHER` end a turn that did not finish its answer.
 */
export type GeminiFinishReason =
  | 'FINISH_REASON_UNSPECIFIED'
  | 'STOP'
  | 'MAX_TOKENS'
  | 'SAFETY'
  | 'RECITATION'
  | 'LANGUAGE'
  | 'OTHER'
  | 'BLOCKLIST'
  | 'PROHIBITED_CONTENT'
  | 'SPII'
  | 'MALFORMED_FUNCTION_CALL'
  | 'IMAGE_SAFETY'
  | 'UNEXPECTED_TOOL_CALL'
  | 'TOO_MANY_TOOL_CALLS'
  | (string & {});

/** A safety classifier's verdict on a candidate or the prompt. */
export interface SafetyRating {
  category: string;
  probability?: string;
  blocked?: boolean;
  [key: string]: unknown;
}

/** Sources the answer recites. */
export interface CitationMetadata {
  citationSources?: Array<Record<string, unknown>>;
  citations?: Array<Record<string, unknown>>;
  [key: string]: unknown;
}

/** One answer of the model. */
export interface Candidate {
  content?: Content;
  finishReason?: GeminiFinishReason;
  finishMessage?: string;
  index?: number;
  safetyRatings?: SafetyRating[];
  citationMetadata?: CitationMetadata;
  /** Grounding (Google Search, URL context) sources and supports, as sent. */
  groundingMetadata?: Record<string, unknown>;
  [key: string]: unknown;
}

/** Why the prompt was blocked, when it was: then no candidate comes. */
export interface PromptFeedback {
  blockReason?: 'BLOCK_REASON_UNSPECIFIED' | 'SAFETY' | 'OTHER' | 'BLOCKLIST' | 'PROHIBITED_CONTENT' | (string & {});
  blockReasonMessage?: string;
  safetyRatings?: SafetyRating[];
  [key: string]: unknown;
}

/** Token counts. `candidatesTokenCount` excludes thoughts (`thoughtsTokenCount`); each streamed chunk has the total. */
export interface UsageMetadata {
  promptTokenCount?: number;
  cachedContentTokenCount?: number;
  candidatesTokenCount?: number;
  toolUsePromptTokenCount?: number;
  thoughtsTokenCount?: number;
  totalTokenCount?: number;
  [key: string]: unknown;
}

/** A `generateContent` answer, and each chunk of `streamGenerateContent`. */
export interface GenerateContentResponse {
  candidates?: Candidate[];
  promptFeedback?: PromptFeedback;
  usageMetadata?: UsageMetadata;
  modelVersion?: string;
  responseId?: string;
  [key: string]: unknown;
}
