import { type MockRequestBody, type MockScriptContext, startMockModel } from '@ai4ts/testing';
import { afterEach, describe, expect, it } from 'vitest';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

async function post(url: string, body: unknown): Promise<{ status: number; json: unknown; text: string }> {
  const response = await fetch(`${url}/v1/responses`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, text, json: response.headers.get('content-type')?.includes('json') ? JSON.parse(text) : undefined };
}

describe('stored Responses conversations', () => {
  it('a request continuing by previous_response_id reads as the whole conversation; the recorded body stays raw', async () => {
    const seen: unknown[] = [];
    const model = await startMockModel({
      script: (body: MockRequestBody, context: MockScriptContext) => {
        if (context.protocol === 'responses') seen.push(body.input);
        return { content: `answer ${context.step}` };
      },
    });
    closers.push(() => model.close());
    const first = await post(model.url, { model: 'm', input: 'Hi', stream: true });
    expect(first.text).toContain('response.completed');
    await post(model.url, { model: 'm', previous_response_id: 'resp_mock_1', input: [{ role: 'user', content: 'Again' }] });
    expect(seen[1]).toEqual([
      { type: 'message', role: 'user', content: 'Hi' },
      expect.objectContaining({ type: 'message', role: 'assistant', content: [expect.objectContaining({ text: 'answer 1' })] }),
      { role: 'user', content: 'Again' },
    ]);
    expect(model.requests[1]?.body).toEqual({
      model: 'm',
      previous_response_id: 'resp_mock_1',
      input: [{ role: 'user', content: 'Again' }],
    });
  });

  it('an unknown id is the API’s 400; a response made with store: false is not kept', async () => {
    const model = await startMockModel({ script: [{ content: 'a' }, { content: 'b' }] });
    closers.push(() => model.close());
    const missing = await post(model.url, { model: 'm', previous_response_id: 'resp_nope', input: 'x' });
    expect(missing.status).toBe(400);
    expect(missing.json).toMatchObject({ error: { type: 'previous_response_not_found' } });
    await post(model.url, { model: 'm', input: 'x', store: false });
    const after = await post(model.url, { model: 'm', previous_response_id: 'resp_mock_1', input: 'y' });
    expect(after.status).toBe(400);
  });

  it('a continued turn’s input_tokens count the whole conversation, as the API bills it, not only the new input', async () => {
    const model = await startMockModel({ script: [{ content: 'A first answer of some length.' }, { content: 'b' }] });
    closers.push(() => model.close());
    type Usage = { usage: { input_tokens: number; output_tokens: number } };
    const first = (await post(model.url, { model: 'm', input: 'A question that takes a few tokens to ask' })).json as Usage;
    const second = (await post(model.url, { model: 'm', previous_response_id: 'resp_mock_1', input: 'y' })).json as Usage;
    expect(second.usage.input_tokens).toBeGreaterThan(first.usage.input_tokens + first.usage.output_tokens);
  });
});
