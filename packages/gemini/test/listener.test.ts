/** GeminiStreamListener, chunk by chunk: each part kind, finish reasons, blocks, errors and cut streams. */
import { ApiError, ProtocolError, StreamIncompleteError, type StreamEvent } from '@ai4ts/core';
import { describe, expect, it } from 'vitest';
import {
  type Candidate,
  collectGemini,
  GeminiStreamListener,
  type GenerateContentResponse,
  type Part,
  PromptBlockedError,
  toChatUsage,
  toFinishReason,
} from '../src/index.js';

const chunk = (parts: Part[], extra: Partial<Candidate> = {}, top: Partial<GenerateContentResponse> = {}) => ({
  candidates: [{ content: { role: 'model', parts }, index: 0, ...extra }],
  responseId: 'resp-1',
  ...top,
});

function fold(...chunks: GenerateContentResponse[]): { listener: GeminiStreamListener; events: StreamEvent[] } {
  const listener = new GeminiStreamListener();
  const events: StreamEvent[] = [];
  for (const type of ['content', 'reasoning', 'tool_call.start', 'tool_call.delta', 'tool_call.done', 'usage', 'finish'] as const) {
    listener.on(type, (event: StreamEvent) => events.push(event));
  }
  for (const c of chunks) listener.push(c);
  return { listener, events };
}

function thrown(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

describe('GeminiStreamListener', () => {
  it('text and thoughts: content and reasoning events, one part each, signatures kept on their part', () => {
    const { listener, events } = fold(
      chunk([{ text: 'Thinking ', thought: true }]),
      chunk([{ text: 'hard.', thought: true, thoughtSignature: 'sig-thought' }]),
      chunk([{ text: 'Hello' }]),
      chunk([{ text: ', world' }]),
      chunk([{ text: '', thoughtSignature: 'sig-text' }], { finishReason: 'STOP' }),
    );
    const response = listener.end();
    expect(response.candidates?.[0]?.content?.parts).toEqual([
      { text: 'Thinking hard.', thought: true, thoughtSignature: 'sig-thought' },
      { text: 'Hello, world', thoughtSignature: 'sig-text' },
    ]);
    expect(listener.text).toBe('Hello, world');
    expect(listener.thoughts).toBe('Thinking hard.');
    expect(events.filter((e) => e.type === 'reasoning').map((e) => (e.type === 'reasoning' ? e.snapshot : ''))).toEqual([
      'Thinking ',
      'Thinking hard.',
    ]);
    expect(events.filter((e) => e.type === 'content').map((e) => (e.type === 'content' ? e.delta : ''))).toEqual(['Hello', ', world']);
    expect(events.at(-1)).toEqual({ type: 'finish', finishReason: 'stop', choice: 0 });
  });

  it('a text after a signed text part starts a new part (the signature ends its part)', () => {
    const { listener } = fold(chunk([{ text: 'A', thoughtSignature: 's1' }]), chunk([{ text: 'B' }], { finishReason: 'STOP' }));
    expect(listener.end().candidates?.[0]?.content?.parts).toEqual([{ text: 'A', thoughtSignature: 's1' }, { text: 'B' }]);
  });

  it('function calls: stable ids when the API gives none, its id when it does; STOP with calls is tool_calls', () => {
    const { listener, events } = fold(
      chunk([{ functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'sig' }]),
      chunk([{ functionCall: { id: 'fc-2', name: 'get_time', args: {} } }], { finishReason: 'STOP' }),
    );
    const response = listener.end();
    expect(response.candidates?.[0]?.content?.parts).toEqual([
      { functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'sig' },
      { functionCall: { id: 'fc-2', name: 'get_time', args: {} } },
    ]);
    const done = events.filter((e) => e.type === 'tool_call.done');
    expect(done).toEqual([
      { type: 'tool_call.done', index: 0, id: 'resp-1:0:0', name: 'get_weather', arguments: '{"city":"Paris"}', choice: 0 },
      { type: 'tool_call.done', index: 1, id: 'fc-2', name: 'get_time', arguments: '{}', choice: 0 },
    ]);
    expect(events.at(-1)).toEqual({ type: 'finish', finishReason: 'tool_calls', choice: 0 });
  });

  it('code execution, inline data and unknown parts are kept as sent', () => {
    const parts: Part[] = [
      { executableCode: { language: 'PYTHON', code: 'print(1)' } },
      { codeExecutionResult: { outcome: 'OUTCOME_OK', output: '1\n' } },
      { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } },
      { videoMetadata: { startOffset: '1s' } },
    ];
    const { listener } = fold(chunk(parts, { finishReason: 'STOP' }));
    expect(listener.end().candidates?.[0]?.content?.parts).toEqual(parts);
  });

  it('usageMetadata: the latest wins, mapped to the shared usage', () => {
    const usage = {
      promptTokenCount: 10,
      candidatesTokenCount: 5,
      thoughtsTokenCount: 7,
      cachedContentTokenCount: 4,
      toolUsePromptTokenCount: 3,
      totalTokenCount: 25,
    };
    const { listener, events } = fold(
      chunk([{ text: 'a' }], {}, { usageMetadata: { promptTokenCount: 10 } }),
      chunk([{ text: 'b' }], { finishReason: 'STOP' }, { usageMetadata: usage }),
    );
    expect(listener.end().usageMetadata).toEqual(usage);
    expect(toChatUsage(usage)).toEqual({
      prompt_tokens: 13,
      completion_tokens: 12,
      total_tokens: 25,
      prompt_tokens_details: { cached_tokens: 4, tool_use_prompt_tokens: 3 },
      completion_tokens_details: { reasoning_tokens: 7 },
    });
    expect(events.filter((e) => e.type === 'usage')).toHaveLength(2);
  });

  it('finish reasons: mapped, the original kept on the candidate', () => {
    expect(toFinishReason('STOP')).toBe('stop');
    expect(toFinishReason('MAX_TOKENS')).toBe('length');
    for (const reason of ['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY']) {
      expect(toFinishReason(reason)).toBe('content_filter');
    }
    expect(toFinishReason('MALFORMED_FUNCTION_CALL')).toBe('MALFORMED_FUNCTION_CALL');
    expect(toFinishReason('OTHER')).toBe('OTHER');
    expect(toFinishReason('__proto__')).toBe('__proto__');
    const ratings = [{ category: 'HARM_CATEGORY_HATE_SPEECH', probability: 'HIGH', blocked: true }];
    const { listener, events } = fold(chunk([], { finishReason: 'SAFETY', safetyRatings: ratings }));
    const candidate = listener.end().candidates?.[0];
    expect(candidate?.finishReason).toBe('SAFETY');
    expect(candidate?.safetyRatings).toEqual(ratings);
    expect(events.at(-1)).toEqual({ type: 'finish', finishReason: 'content_filter', choice: 0 });
  });

  it('grounding kept, citation lists appended across chunks', () => {
    const grounding = { webSearchQueries: ['weather paris'], groundingChunks: [{ web: { uri: 'https://example.com' } }] };
    const { listener } = fold(
      chunk([{ text: 'a' }], { citationMetadata: { citationSources: [{ startIndex: 0, uri: 'u1' }] } }),
      chunk([{ text: 'b' }], {
        citationMetadata: { citationSources: [{ startIndex: 1, uri: 'u2' }] },
        groundingMetadata: grounding,
        finishReason: 'STOP',
      }),
    );
    const candidate = listener.end().candidates?.[0];
    expect(candidate?.citationMetadata?.citationSources).toEqual([
      { startIndex: 0, uri: 'u1' },
      { startIndex: 1, uri: 'u2' },
    ]);
    expect(candidate?.groundingMetadata).toEqual(grounding);
  });

  it('promptFeedback.blockReason is a PromptBlockedError', () => {
    const listener = new GeminiStreamListener();
    const error = thrown(() =>
      listener.push({ promptFeedback: { blockReason: 'SAFETY', safetyRatings: [] }, usageMetadata: { promptTokenCount: 4 } }),
    );
    expect(error).toBeInstanceOf(PromptBlockedError);
    expect((error as PromptBlockedError).blockReason).toBe('SAFETY');
    expect(listener.status).toBe('failed');
  });

  it('an in-stream { error } is an ApiError with the partial response, and nothing after it applies', () => {
    const listener = new GeminiStreamListener();
    listener.push(chunk([{ text: 'so far' }]));
    const error = thrown(() => listener.push({ error: { code: 503, message: 'The model is overloaded.', status: 'UNAVAILABLE' } }));
    expect(error).toBeInstanceOf(ApiError);
    // The stream began with HTTP 200: no HTTP status; the number stays in the body.
    expect(error).toMatchObject({ status: undefined, code: 'UNAVAILABLE', message: 'The model is overloaded.' });
    expect((error as ApiError).body).toMatchObject({ error: { code: 503 } });
    expect((error as ApiError).partial).toMatchObject({ candidates: [{ content: { parts: [{ text: 'so far' }] } }] });
    listener.push(chunk([{ text: 'ignored' }], { finishReason: 'STOP' }));
    expect(listener.text).toBe('so far');
  });

  it('a stream that ends without a finishReason is incomplete, its partial the response so far', () => {
    const { listener } = fold(chunk([{ text: 'half' }]));
    const error = thrown(() => listener.end());
    expect(error).toBeInstanceOf(StreamIncompleteError);
    expect((error as StreamIncompleteError).partial).toMatchObject({ candidates: [{ content: { parts: [{ text: 'half' }] } }] });
  });

  it('a stream cut inside a streamed call is incomplete, the arguments so far in the partial', () => {
    const { listener, events } = fold(
      chunk([{ functionCall: { name: 'f', willContinue: true } as never }]),
      chunk([{ functionCall: { partialArgs: [{ jsonPath: '$.q', stringValue: 'par', willContinue: true }], willContinue: true } as never }]),
    );
    expect(events.some((e) => e.type === 'tool_call.done')).toBe(false);
    const error = thrown(() => listener.end()) as StreamIncompleteError;
    expect(error).toBeInstanceOf(StreamIncompleteError);
    expect(error.partial).toMatchObject({
      candidates: [{ content: { parts: [{ functionCall: { name: 'f', args: { q: 'par' }, willContinue: true } }] } }],
    });
  });

  it('data that is not a JSON object is a ProtocolError', async () => {
    await expect(collectGemini('data: [1,2]\n\n')).rejects.toBeInstanceOf(ProtocolError);
    await expect(collectGemini('data: {not json\n\n')).rejects.toBeInstanceOf(ProtocolError);
    await expect(collectGemini('data: {"candidates":[{"content":{"parts":[{"functionCall":{}}]}}]}\n\n')).rejects.toBeInstanceOf(
      ProtocolError,
    );
  });

  it('a partialArgs path of __proto__ is an own field, never the prototype', () => {
    const { listener } = fold(
      chunk([{ functionCall: { name: 'f', willContinue: true } as never }]),
      chunk([{ functionCall: { partialArgs: [{ jsonPath: '$.__proto__.polluted', boolValue: true }] } as never }], {
        finishReason: 'STOP',
      }),
    );
    const args = listener.end().candidates?.[0]?.content?.parts[0]?.functionCall?.args as Record<string, unknown>;
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.hasOwn(args, '__proto__')).toBe(true);
  });

  it('one finish per candidate, however many chunks repeat the reason', () => {
    const { listener, events } = fold(chunk([{ text: 'a' }], { finishReason: 'STOP' }), chunk([], { finishReason: 'STOP' }));
    listener.end();
    expect(events.filter((e) => e.type === 'finish')).toHaveLength(1);
  });

  it('reset starts a new attempt clean', () => {
    const { listener } = fold(chunk([{ text: 'first' }]));
    listener.reset();
    listener.push(chunk([{ text: 'second' }], { finishReason: 'STOP' }));
    expect(listener.end().candidates?.[0]?.content?.parts).toEqual([{ text: 'second' }]);
  });
});
