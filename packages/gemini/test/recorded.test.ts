/**
 * Recorded Gemini and Vertex AI streams (fixtures/, from the Vercel AI SDK, Apache-2.0: see fixtures/NOTICE), replayed
 * whole and in every chunking. The expected values are read off the recordings, not off the listener.
 */
import { readFileSync } from 'node:fs';
import { splitAt, streamOf } from '@ai4ts/test-kit';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { collectGemini, GeminiStreamListener, type GenerateContentResponse, toToolCalls } from '../src/index.js';

/** A recording as the SSE text the API sends with `alt=sse`: each line a `data:` event. */
function recorded(name: string): string {
  const lines = readFileSync(new URL(`./fixtures/${name}.chunks.txt`, import.meta.url), 'utf8').split('\n');
  return lines.filter((line) => line.trim() !== '').map((line) => `data: ${line}\r\n\r\n`).join('');
}

/** The first recorded signature of a recording, by the chunk it came in. */
function signatureIn(name: string, chunk: number): string {
  const text = readFileSync(new URL(`./fixtures/${name}.chunks.txt`, import.meta.url), 'utf8');
  const line = text.split('\n').filter((l) => l.trim() !== '')[chunk] ?? '';
  const signature = (JSON.parse(line) as GenerateContentResponse).candidates?.[0]?.content?.parts[0]?.thoughtSignature;
  if (!signature) throw new Error(`no signature in chunk ${chunk} of ${name}`);
  return signature;
}

const partsOf = (response: GenerateContentResponse) => response.candidates?.[0]?.content?.parts ?? [];

describe('recorded Gemini streams', () => {
  it('text: the chunks join into one part, the trailing signature on it', async () => {
    const response = await collectGemini(recorded('google-text'));
    expect(partsOf(response)).toEqual([
      {
        text: 'There are **3** "r"s in strawberry.\n\nst**r**awbe**rr**y',
        thoughtSignature: signatureIn('google-text', 2),
      },
    ]);
    expect(response.candidates?.[0]?.finishReason).toBe('STOP');
    expect(response.modelVersion).toBe('gemini-3-pro-preview');
  });

  it('a Gemini 3 call with its args and signature in one chunk', async () => {
    const response = await collectGemini(recorded('google-tool-call-gemini3'));
    const [call] = partsOf(response);
    expect(call).toEqual({
      functionCall: { name: 'weather', args: { location: 'San Francisco' } },
      thoughtSignature: signatureIn('google-tool-call-gemini3', 0),
    });
    expect(toToolCalls(response)).toEqual([
      { id: expect.any(String), name: 'weather', arguments: '{"location":"San Francisco"}' },
    ]);
    expect(response.usageMetadata).toMatchObject({ promptTokenCount: 29, candidatesTokenCount: 15, thoughtsTokenCount: 804 });
  });

  it("Vertex's streamed arguments: two calls merged, the signature on the first", async () => {
    const listener = new GeminiStreamListener();
    const done: { name: string; arguments: string }[] = [];
    listener.on('tool_call.done', (event) => done.push({ name: event.name, arguments: event.arguments }));
    const response = await collectGemini(recorded('google-stream-tool-call-arguments'), { listener });
    expect(partsOf(response)).toEqual([
      {
        functionCall: { name: 'getWeather', args: { location: 'Boston' } },
        thoughtSignature: signatureIn('google-stream-tool-call-arguments', 0),
      },
      { functionCall: { name: 'getWeather', args: { location: 'San Francisco' } } },
    ]);
    expect(done).toEqual([
      { name: 'getWeather', arguments: '{"location":"Boston"}' },
      { name: 'getWeather', arguments: '{"location":"San Francisco"}' },
    ]);
  });

  it('a thought, a call without args, then three streamed calls', async () => {
    const response = await collectGemini(recorded('google-stream-no-args-tool-call'));
    const parts = partsOf(response);
    expect(parts[0]).toMatchObject({ thought: true, text: expect.stringContaining('**Processing User Requests**') });
    expect(parts.slice(1, 5).map((part) => part.functionCall)).toEqual([
      { name: 'read_theme' },
      { name: 'read_screen', args: { id: 'A' } },
      { name: 'read_screen', args: { id: 'B' } },
      { name: 'read_screen', args: { id: 'C' } },
    ]);
    expect(parts[1]?.thoughtSignature).toBe(signatureIn('google-stream-no-args-tool-call', 1));
    expect(toToolCalls(response).map((call) => call.arguments)).toEqual(['{}', '{"id":"A"}', '{"id":"B"}', '{"id":"C"}']);
  });

  it('array arguments whose last fragment ends the call without a terminal functionCall', async () => {
    const response = await collectGemini(recorded('google-stream-tool-call-array-arguments-missing-terminal-function-call'));
    expect(partsOf(response)[0]?.functionCall).toEqual({
      name: 'writeItems',
      args: {
        operations: [
          { action: 'add', description: 'Fresh red apple', itemid: 'apple_001', price: 0.5 },
          { action: 'add', description: 'Ripe yellow banana', itemid: 'banana_001', price: 0.3 },
        ],
      },
    });
  });

  it('nested arguments, strings continued across fragments', async () => {
    const response = await collectGemini(recorded('google-vertex-stream-tool-call-arguments-nested.1'));
    const call = partsOf(response)[0]?.functionCall;
    const args = call?.args as { recipe: { name: string; ingredients: unknown[]; steps: string[] } } | undefined;
    const recipe = args?.recipe ?? { name: '', ingredients: [], steps: [] };
    expect(call?.name).toBe('cookRecipe');
    expect(recipe.name).toBe('Lasagna');
    expect(recipe.ingredients).toHaveLength(10);
    expect(recipe.ingredients[0]).toEqual({ amount: '16 oz', name: 'Lasagna noodles' });
    expect(recipe.steps[1]).toBe('Cook lasagna noodles according to package directions, drain and set aside.');
    expect(recipe.steps[4]).toBe('In a 9x13 baking dish, spread a thin layer of meat sauce.');
    expect(recipe.steps).toHaveLength(10);
  });

  const names = [
    'google-text',
    'google-reasoning',
    'google-reasoning-gemini3',
    'google-tool-call',
    'google-tool-call-gemini3',
    'google-stream-tool-call-arguments',
    'google-stream-no-args-tool-call',
    'google-stream-tool-call-array-arguments-missing-terminal-function-call',
    'google-vertex-stream-tool-call-arguments-nested.1',
  ];

  it('every chunking of every recording gives the same response as the whole text', async () => {
    const encoder = new TextEncoder();
    const wholes = new Map<string, GenerateContentResponse>();
    for (const name of names) wholes.set(name, await collectGemini(recorded(name)));
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...names), fc.array(fc.nat(), { maxLength: 12 }), async (name, offsets) => {
        const bytes = encoder.encode(recorded(name));
        const cuts = [...new Set(offsets.map((offset) => offset % (bytes.length + 1)))].sort((a, b) => a - b);
        expect(await collectGemini(streamOf(splitAt(bytes, cuts)))).toEqual(wholes.get(name));
      }),
      { numRuns: 120 },
    );
  });

  it('each recording cut before its last chunk is a StreamIncompleteError', async () => {
    for (const name of names) {
      const text = recorded(name);
      const cut = text.slice(0, text.lastIndexOf('data: '));
      await expect(collectGemini(cut)).rejects.toMatchObject({ name: 'StreamIncompleteError' });
    }
  });
});
