/**
 * The Vercel AI SDK as a peer: its providers' `doStream` (the layer that reads the bytes: `@ai-sdk/openai`'s chat
 * and Responses models, `@ai-sdk/anthropic`'s Messages model), the fetch answering from the same in-memory pieces,
 * and the stream of parts folded into the text, the reasoning and each call's final input. `streamText` adds the
 * SDK's own steps and transforms on top of this; the provider is what compares with a collector.
 */
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import type { LanguageModelV3 } from '@ai-sdk/provider';
import { type Digest, streamOf } from './input.ts';

function fetchFrom(pieces: () => Uint8Array[]): typeof fetch {
  return async () => new Response(streamOf(pieces()), { headers: { 'content-type': 'text/event-stream' } });
}

/** The AI SDK's model of a protocol, reading `pieces` for every call. */
export function aiSdkModel(protocol: 'chat' | 'responses' | 'messages', pieces: () => Uint8Array[]): LanguageModelV3 {
  if (protocol === 'messages') return createAnthropic({ apiKey: 'x', baseURL: 'http://bench.invalid/v1', fetch: fetchFrom(pieces) })('claude-bench');
  const openai = createOpenAI({ apiKey: 'x', baseURL: 'http://bench.invalid/v1', fetch: fetchFrom(pieces) });
  return protocol === 'chat' ? openai.chat('gpt-bench') : openai.responses('gpt-bench');
}

/** Streams one answer from `model` and folds its parts as a user of the provider would. */
export async function aiSdkFinal(model: LanguageModelV3): Promise<Digest> {
  const { stream } = await model.doStream({ prompt: [{ role: 'user', content: [{ type: 'text', text: 'go' }] }] });
  let text = '';
  let reasoning = '';
  const args: string[] = [];
  const reader = stream.getReader();
  for (let read = await reader.read(); !read.done; read = await reader.read()) {
    const part = read.value;
    if (part.type === 'text-delta') text += part.delta;
    else if (part.type === 'reasoning-delta') reasoning += part.delta;
    else if (part.type === 'tool-call') args.push(part.input);
    else if (part.type === 'error') throw part.error instanceof Error ? part.error : new Error(String(part.error));
  }
  return { text, reasoning, args };
}
