/** The scripted Gemini, read with plain fetch: the wire shapes Google documents, and what the real API rejects. */
import { parseSse } from '@ai4ts/sse';
import { afterEach, describe, expect, it } from 'vitest';
import { type MockModel, type MockScript, startMockModel } from '../src/index.js';

let model: MockModel | undefined;
afterEach(async () => {
  await model?.close();
  model = undefined;
});

async function start(script: MockScript): Promise<MockModel> {
  model = await startMockModel({ script });
  return model;
}

function post(m: MockModel, path: string, body: unknown): Promise<Response> {
  return fetch(`${m.geminiBaseURL}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-goog-api-key': 'test' },
    body: JSON.stringify(body),
  });
}

const hi = { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] };

describe('the scripted Gemini', () => {
  it('answers generateContent with a GenerateContentResponse, the model from the URL', async () => {
    const models: string[] = [];
    const m = await start((_body, context) => {
      if (context.protocol === 'gemini') models.push(context.model);
      return { content: 'Hello!' };
    });
    const answer = await (await post(m, '/models/gemini-2.5-flash:generateContent', hi)).json();
    expect(answer).toMatchObject({
      candidates: [{ content: { role: 'model', parts: [{ text: 'Hello!' }] }, finishReason: 'STOP', index: 0 }],
      usageMetadata: { promptTokenCount: expect.any(Number), candidatesTokenCount: expect.any(Number) },
      modelVersion: 'gemini-2.5-flash',
    });
    expect(models).toEqual(['gemini-2.5-flash']);
  });

  it('streams SSE chunks of new parts, the finishReason and usage on the last, calls whole', async () => {
    const m = await start([{ content: 'Hello there', toolCalls: [{ name: 'f', arguments: { a: 1 } }] }]);
    const response = await post(m, '/models/gemini-3-flash-preview:streamGenerateContent?alt=sse', hi);
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const chunks: { candidates?: { content: { parts: Record<string, unknown>[] }; finishReason?: string }[] }[] = [];
    for await (const event of parseSse(response)) chunks.push(JSON.parse(event.data));
    const parts = chunks.flatMap((chunk) => chunk.candidates?.[0]?.content.parts ?? []);
    expect(parts.filter((part) => typeof part.text === 'string').map((part) => part.text).join('')).toBe('Hello there');
    const call = parts.find((part) => part.functionCall !== undefined);
    // Gemini 3: the first function call carries the signature.
    expect(call).toEqual({ functionCall: { name: 'f', args: { a: 1 } }, thoughtSignature: expect.any(String) });
    expect(chunks.at(-1)?.candidates?.[0]?.finishReason).toBe('STOP');
    expect(chunks.slice(0, -1).every((chunk) => chunk.candidates?.[0]?.finishReason === undefined)).toBe(true);
  });

  it('a blocked prompt: promptFeedback and no candidates', async () => {
    const m = await start([{ blockReason: 'SAFETY' }]);
    const answer = await (await post(m, '/models/gemini-2.5-flash:generateContent', hi)).json();
    expect(answer.promptFeedback.blockReason).toBe('SAFETY');
    expect(answer.candidates).toBeUndefined();
  });

  it('rejects a model field in the body, as the API does', async () => {
    const m = await start([{ content: 'never' }]);
    const response = await post(m, '/models/gemini-2.5-flash:generateContent', { ...hi, model: 'gemini-2.5-flash' });
    expect(response.status).toBe(400);
    expect((await response.json()).error).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT' });
  });

  it('rejects function responses that do not answer the previous model turn', async () => {
    const m = await start([{ content: 'never' }, { content: 'never' }]);
    const call = { role: 'model', parts: [{ functionCall: { name: 'f', args: {} } }] };
    const twoAnswers = {
      role: 'user',
      parts: [
        { functionResponse: { name: 'f', response: { output: '1' } } },
        { functionResponse: { name: 'f', response: { output: '2' } } },
      ],
    };
    const count = await post(m, '/models/gemini-2.5-flash:generateContent', { contents: [hi.contents[0], call, twoAnswers] });
    expect(count.status).toBe(400);
    expect((await count.json()).error.message).toContain('number of function response parts');
    const wrongName = { role: 'user', parts: [{ functionResponse: { name: 'g', response: {} } }] };
    const name = await post(m, '/models/gemini-2.5-flash:generateContent', { contents: [hi.contents[0], call, wrongName] });
    expect(name.status).toBe(400);
  });

  it('on Gemini 3, takes a function-call turn only with a signature it gave', async () => {
    const m = await start([{ toolCalls: [{ name: 'f', arguments: {} }] }, { content: 'ok' }]);
    const first = await (await post(m, '/models/gemini-3-pro-preview:generateContent', hi)).json();
    const turn = first.candidates[0].content;
    const answer = { role: 'user', parts: [{ functionResponse: { name: 'f', response: { output: 'x' } } }] };
    const forged = { ...turn, parts: [{ ...turn.parts[0], thoughtSignature: 'forged' }] };
    const rejected = await post(m, '/models/gemini-3-pro-preview:generateContent', { contents: [hi.contents[0], forged, answer] });
    expect((await rejected.json()).error.message).toBe('Corrupted thought signature.');
    const accepted = await post(m, '/models/gemini-3-pro-preview:generateContent', { contents: [hi.contents[0], turn, answer] });
    expect(accepted.status).toBe(200);
  });

  it('in-stream errors in Google\'s shape', async () => {
    const m = await start([{ content: 'abc', streamError: { message: 'boom', type: 'UNAVAILABLE' } }]);
    const response = await post(m, '/models/gemini-2.5-flash:streamGenerateContent?alt=sse', hi);
    const events: string[] = [];
    for await (const event of parseSse(response)) events.push(event.data);
    expect(JSON.parse(events.at(-1) ?? '')).toEqual({ error: { code: 500, message: 'boom', status: 'UNAVAILABLE' } });
  });
});
