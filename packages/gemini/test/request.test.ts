/** The Gemini request: endpoint, tools gathered into one declaration list, output, checks. */
import { Ai4tsError, defineTool } from '@ai4ts/core';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { GEMINI_PROTOCOL, geminiEndpoint } from '../src/index.js';

const tool = (name: string) => defineTool({ name, description: `${name} tool`, parameters: z.object({ q: z.string() }), execute: () => 'ok' });
const contents = [{ role: 'user' as const, parts: [{ text: 'hi' }] }];

describe('the Gemini request', () => {
  it('the endpoint carries the model (a models/ prefix accepted) and alt=sse for a stream', () => {
    expect(geminiEndpoint({ model: 'gemini-2.5-flash', contents }, false)).toEqual({
      path: '/models/gemini-2.5-flash:generateContent',
      body: { contents },
    });
    expect(geminiEndpoint({ model: 'models/gemini-2.5-flash', contents }, true)).toEqual({
      path: '/models/gemini-2.5-flash:streamGenerateContent',
      query: { alt: 'sse' },
      body: { contents },
    });
    expect(geminiEndpoint({ model: 'a/b?c' }, false).path).toBe('/models/a%2Fb%3Fc:generateContent');
  });

  it('defineTool tools become one functionDeclarations tool, built-in tools stay; the model goes to the URL', () => {
    const wire = GEMINI_PROTOCOL.toWireRequest(
      { model: 'gemini-2.5-flash', contents, tools: [tool('a'), { googleSearch: {} }, tool('b')], maxSteps: 3 },
      { streamOptions: false },
    );
    expect(wire.tools).toEqual([
      {
        functionDeclarations: [
          { name: 'a', description: 'a tool', parametersJsonSchema: expect.objectContaining({ type: 'object' }) },
          { name: 'b', description: 'b tool', parametersJsonSchema: expect.objectContaining({ type: 'object' }) },
        ],
      },
      { googleSearch: {} },
    ]);
    expect(wire.maxSteps).toBeUndefined();
    const request = GEMINI_PROTOCOL.streamBody(wire, { streamOptions: false });
    expect(request.model).toBe('gemini-2.5-flash');
    const sent = GEMINI_PROTOCOL.endpoint?.(request, true);
    expect(sent?.body?.model).toBeUndefined();
    expect(sent?.body?.contents).toEqual(contents);
  });

  it('output: JSON mime type and the schema, beside the caller\'s generationConfig', () => {
    const wire = GEMINI_PROTOCOL.toWireRequest(
      { model: 'm', contents, generationConfig: { temperature: 0.2 }, output: z.object({ answer: z.string() }) },
      { streamOptions: false },
    );
    expect(wire.generationConfig).toMatchObject({
      temperature: 0.2,
      responseMimeType: 'application/json',
      responseJsonSchema: { type: 'object', properties: { answer: { type: 'string' } } },
    });
  });

  it('a request without a model or with a bad role is an Ai4tsError before anything is sent', () => {
    const quirks = { streamOptions: false };
    expect(() => GEMINI_PROTOCOL.toWireRequest({ model: '', contents }, quirks)).toThrow(Ai4tsError);
    expect(() =>
      GEMINI_PROTOCOL.toWireRequest({ model: 'm', contents: [{ role: 'assistant', parts: [] }] }, quirks),
    ).toThrow(/role/);
  });
});
