/**
 * Typos that no longer vanish (issue 26, item 22): a plain-JavaScript request with an unknown top-level field
 * (`temprature`) or a misspelled loop field (`maxStep`) is refused with `strictRequests`, naming the field and the
 * nearest known one, before anything is sent; by default each unknown field is warned about once through the logger
 * and the request goes as before.
 */
import { type MockModel, startMockModel } from '@ai4ts/testing';
import { Ai4ts, type Ai4tsOptions, UnknownFieldError } from 'ai4ts';
import { afterEach, describe, expect, it } from 'vitest';

let model: MockModel | undefined;
afterEach(async () => {
  await model?.close();
  model = undefined;
});

async function start(options: Ai4tsOptions): Promise<Ai4ts> {
  model = await startMockModel({ script: () => ({ content: 'Hi.' }) });
  return new Ai4ts({ provider: 'openai-compatible', baseURL: model.baseURL, apiKey: 'sk-strict-0123456789', maxRetries: 0, ...options });
}

const user = { role: 'user' as const, content: 'Hello' };
/** What a plain-JavaScript caller can pass: the types do not stop it. */
type Loose = Record<string, unknown>;
const requests = {
  chat: (c: Ai4ts, extra: Loose) => c.chat.create({ model: 'mock-model', messages: [user], ...extra }),
  responses: (c: Ai4ts, extra: Loose) => c.responses.create({ model: 'mock-model', input: 'Hello', ...extra }),
  messages: (c: Ai4ts, extra: Loose) => c.messages.create({ model: 'mock-model', max_tokens: 32, messages: [user], ...extra }),
};

describe.each(Object.keys(requests) as (keyof typeof requests)[])('%s', (protocol) => {
  it('strictRequests: an unknown top-level field is a typed error naming it and the nearest known name; nothing is sent', async () => {
    const client = await start({ strictRequests: true });
    const error = await requests[protocol](client, { temprature: 0.2 }).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(UnknownFieldError);
    expect(error).toMatchObject({ field: 'temprature', suggestion: 'temperature' });
    expect((error as Error).message).toBe(`Unknown ${protocol} request field "temprature": did you mean "temperature"?`);
    expect(model?.requests).toHaveLength(0);
  });

  it('strictRequests: a misspelled loop field (maxStep) is refused, the loop field suggested', async () => {
    const client = await start({ strictRequests: true });
    const error = await requests[protocol](client, { maxStep: 3 }).catch((thrown: unknown) => thrown);
    expect(error).toMatchObject({ name: 'UnknownFieldError', field: 'maxStep', suggestion: 'maxSteps' });
  });

  it('by default: one warning per unknown field through the logger, and the request goes as before', async () => {
    const warnings: unknown[][] = [];
    const logger = { debug: () => {}, info: () => {}, warn: (...args: unknown[]) => warnings.push(args), error: () => {} };
    const client = await start({ logger, logLevel: 'warn' });
    await requests[protocol](client, { temprature: 0.2 });
    await requests[protocol](client, { temprature: 0.3, zzz_vendor: 1 });
    expect(warnings).toEqual([
      ['ai4ts: unknown request field', { protocol, field: 'temprature', suggestion: 'temperature' }],
      ['ai4ts: unknown request field', { protocol, field: 'zzz_vendor', suggestion: undefined }],
    ]);
    expect(model?.requests[0]?.body).toMatchObject({ temprature: 0.2 });
  });

  it('known fields, loop fields and telemetry pass in strict mode', async () => {
    const client = await start({ strictRequests: true });
    await expect(requests[protocol](client, { temperature: 0.2, maxSteps: 2, telemetry: {} })).resolves.toBeDefined();
  });
});

describe('gemini', () => {
  it('strictRequests: a snake_case field and a misspelled loop field are refused, the Gemini name suggested', async () => {
    model = await startMockModel({ script: () => ({ content: 'Hi.' }) });
    const client = new Ai4ts({ provider: 'gemini', baseURL: model.geminiBaseURL, apiKey: 'AIza-strict', strictRequests: true });
    const ask = (extra: Loose) =>
      client.gemini.create({ model: 'gemini-2.5-flash', contents: [{ role: 'user', parts: [{ text: 'Hi' }] }], ...extra });
    await expect(ask({ generation_config: {} })).rejects.toMatchObject({ field: 'generation_config', suggestion: 'generationConfig' });
    await expect(ask({ maxStep: 2 })).rejects.toMatchObject({ field: 'maxStep', suggestion: 'maxSteps' });
    await expect(ask({ generationConfig: { temperature: 0 }, maxSteps: 2 })).resolves.toBeDefined();
  });
});
