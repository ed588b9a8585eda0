/**
 * Typed requests, one rule for the four protocols: every documented field is typed, a misspelled or mistyped field
 * does not compile, and a provider's own fields go in the per-request options' `extraBody`, which lands in the JSON
 * body as given. The compile-time half is `typeErrors` below: `npm run typecheck` (tsc) fails if any
 * `@ts-expect-error` there stops being an error. It is type-checked, never called.
 */
import { type MockModel, startMockModel } from '@ai4ts/testing';
import {
  Ai4ts,
  type ChatCompletionCreateParams,
  defineTool,
  type MessageCreateParams,
  type ResponseCreateParams,
} from 'ai4ts';
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';

const echo = defineTool({ name: 'echo', parameters: z.object({ text: z.string() }), execute: ({ text }) => text });

/** Misspellings and wrong types, plain and in loop mode, on the four protocols. */
export function typeErrors(client: Ai4ts): void {
  const messages = [{ role: 'user' as const, content: 'Hi' }];
  // @ts-expect-error: a misspelled field
  void client.chat.create({ model: 'm', messages, temprature: 0.2 });
  // @ts-expect-error: a number field given a string
  void client.chat.create({ model: 'm', messages, max_tokens: 'lots' });
  // @ts-expect-error: a misspelled field in loop mode
  void client.chat.create({ model: 'm', messages, tools: [echo], temprature: 0.2 });
  // @ts-expect-error: a provider's own field belongs in extraBody
  void client.chat.stream({ model: 'm', messages, enable_thinking: true });
  // @ts-expect-error: a misspelled field of a content part
  void client.chat.create({ model: 'm', messages: [{ role: 'user', content: [{ type: 'text', txt: 'Hi' }] }] });
  void client.chat.create({
    model: 'm',
    // @ts-expect-error: an unknown content part type
    messages: [{ role: 'user', content: [{ type: 'image', url: 'https://example.com/a.png' }] }],
  });
  // @ts-expect-error: an unknown reasoning effort
  void client.chat.create({ model: 'm', messages, reasoning_effort: 'extreme' });

  // @ts-expect-error: a misspelled field
  void client.responses.create({ model: 'm', input: 'Hi', temprature: 0.2 });
  // @ts-expect-error: a number field given a string
  void client.responses.create({ model: 'm', input: 'Hi', max_output_tokens: 'lots' });
  // @ts-expect-error: a misspelled field in loop mode
  void client.responses.stream({ model: 'm', input: 'Hi', tools: [echo], max_output_token: 100 });
  // @ts-expect-error: a misspelled field of an input content part
  void client.responses.create({ model: 'm', input: [{ role: 'user', content: [{ type: 'input_text', txt: 'x' }] }] });

  // @ts-expect-error: a misspelled field
  void client.messages.create({ model: 'm', max_tokens: 64, messages, temprature: 0.2 });
  // @ts-expect-error: a number field given a string
  void client.messages.create({ model: 'm', max_tokens: 'lots', messages });
  // @ts-expect-error: a misspelled field in loop mode
  void client.messages.create({ model: 'm', max_tokens: 64, messages, tools: [echo], stop_sequence: ['x'] });
  // @ts-expect-error: thinking needs its budget
  void client.messages.create({ model: 'm', max_tokens: 64, messages, thinking: { type: 'enabled' } });

  const contents = [{ role: 'user' as const, parts: [{ text: 'Hi' }] }];
  // @ts-expect-error: a misspelled field
  void client.gemini.create({ model: 'm', contents, generationConfg: { temperature: 0.2 } });
  // @ts-expect-error: a number field given a string
  void client.gemini.create({ model: 'm', contents, generationConfig: { maxOutputTokens: 'lots' } });
  // @ts-expect-error: a misspelled field in loop mode
  void client.gemini.stream({ model: 'm', contents, tools: [echo], systemInstructions: { parts: [{ text: 'x' }] } });
  // @ts-expect-error: contents, not messages
  void client.gemini.create({ model: 'm', messages });
}

let model: MockModel | undefined;
afterEach(async () => {
  await model?.close();
  model = undefined;
});

async function start(): Promise<{ client: Ai4ts; model: MockModel }> {
  model = await startMockModel({ script: [{ content: 'Hi.' }] });
  return {
    client: new Ai4ts({ provider: 'openai-compatible', baseURL: model.baseURL, apiKey: 'k', maxRetries: 0 }),
    model,
  };
}

describe('typed requests reach the wire as written, and extraBody adds the rest', () => {
  it('chat', async () => {
    const { client, model } = await start();
    const request: ChatCompletionCreateParams = {
      model: 'mock-model',
      messages: [
        { role: 'system', content: 'Be brief.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA', detail: 'low' } },
          ],
        },
      ],
      temperature: 0.2,
      top_p: 0.9,
      max_completion_tokens: 64,
      stop: ['\n\n'],
      seed: 7,
      response_format: { type: 'json_object' },
      tool_choice: 'auto',
      reasoning_effort: 'low',
      metadata: { run: '1' },
    };
    await client.chat.create(request, { extraBody: { enable_thinking: false, top_k: 20 } });
    expect(model.requests[0]?.body).toEqual({ ...request, enable_thinking: false, top_k: 20 });
  });

  it('Responses', async () => {
    const { client, model } = await start();
    const request: ResponseCreateParams = {
      model: 'mock-model',
      instructions: 'Be brief.',
      input: [{ role: 'user', content: [{ type: 'input_text', text: 'Hi' }] }],
      reasoning: { effort: 'low', summary: 'auto' },
      text: { format: { type: 'json_schema', name: 'answer', schema: { type: 'object' }, strict: true } },
      include: ['reasoning.encrypted_content'],
      max_output_tokens: 64,
      truncation: 'auto',
      store: false,
    };
    await client.responses.create(request, { extraBody: { vendor_flag: true } });
    expect(model.requests[0]?.body).toEqual({ ...request, vendor_flag: true });
  });

  it('Messages', async () => {
    const { client, model } = await start();
    const request: MessageCreateParams = {
      model: 'mock-model',
      max_tokens: 64,
      system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }],
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } },
            { type: 'text', text: 'What is this?' },
          ],
        },
      ],
      thinking: { type: 'enabled', budget_tokens: 1024 },
      tool_choice: { type: 'auto', disable_parallel_tool_use: true },
      stop_sequences: ['END'],
      metadata: { user_id: 'u1' },
    };
    await client.messages.create(request, { extraBody: { vendor_flag: true } });
    // `stream` is the service's to set.
    expect(model.requests[0]?.body).toEqual({ ...request, stream: false, vendor_flag: true });
  });

  it('a mistyped field that reaches run time anyway (plain JavaScript) is the API’s to judge, except the checked ones', async () => {
    const { client } = await start();
    const lots: unknown = 'lots';
    const request = { model: 'mock-model', max_tokens: lots, messages: [{ role: 'user' as const, content: 'Hi' }] };
    // @ts-expect-error: plain JavaScript could send it; max_tokens is one of the fields checked before sending.
    await expect(client.messages.create(request)).rejects.toThrow(/Invalid Messages request[\s\S]*max_tokens/);
  });
});
