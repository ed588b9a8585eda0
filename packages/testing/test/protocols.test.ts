import { agentQuestion, agentScript, type MockModel, type MockProtocol, startMockModel } from '@ai4ts/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { field, post, text } from './helpers.js';

let model: MockModel | undefined;
afterEach(async () => {
  await model?.close();
  model = undefined;
});

const temperatures: Record<string, number> = { Paris: 18, Zürich: 12.5 };

/** The two tools the agent script expects, run by hand. */
function runTool(name: string, args: Record<string, unknown>): string {
  if (name === 'get_weather') return JSON.stringify({ city: args.city, temperature: temperatures[String(args.city)] });
  return String((Number(args.value) * 9) / 5 + 32);
}

function record(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null ? { ...value } : {};
}

describe('one script, three protocols', () => {
  it('answers each route in its own shape, counts steps across routes and tells the script the protocol', async () => {
    const seen: [MockProtocol, number, string | undefined][] = [];
    model = await startMockModel({
      script: (body, context) => {
        seen.push([context.protocol, context.step, body.model]);
        return { content: `${context.protocol} answer ${context.step}` };
      },
    });
    const chat = await (await post(model, '/chat/completions', { model: 'a', messages: [{ role: 'user', content: 'hi' }] })).json();
    const responses = await (await post(model, '/responses', { model: 'b', input: 'hi' })).json();
    const messages = await (await post(model, '/messages', { model: 'c', max_tokens: 9, messages: [{ role: 'user', content: 'hi' }] })).json();
    expect(text(chat, 'choices', 0, 'message', 'content')).toBe('chat answer 1');
    expect(text(responses, 'output', 0, 'content', 0, 'text')).toBe('responses answer 2');
    expect(text(messages, 'content', 0, 'text')).toBe('messages answer 3');
    expect(seen).toEqual([
      ['chat', 1, 'a'],
      ['responses', 2, 'b'],
      ['messages', 3, 'c'],
    ]);
    expect(model.requests.map((r) => r.path)).toEqual(['/v1/chat/completions', '/v1/responses', '/v1/messages']);
  });

  it('narrows the body on context.protocol', async () => {
    const lengths: number[] = [];
    model = await startMockModel({
      script: (_body, context) => {
        if (context.protocol === 'responses') lengths.push(typeof context.body.input === 'string' ? -1 : context.body.input.length);
        else if (context.protocol === 'gemini') lengths.push(context.body.contents.length);
        else lengths.push(context.body.messages.length);
        return {};
      },
    });
    await post(model, '/responses', { input: [{ role: 'user', content: 'a' }, { role: 'user', content: 'b' }] });
    await post(model, '/messages', { max_tokens: 9, messages: [{ role: 'user', content: 'a' }] });
    expect(lengths).toEqual([2, 1]);
  });

  it('runs agentScript over Responses: function_call items in, function_call_output items back', async () => {
    model = await startMockModel({ script: agentScript });
    const input: unknown[] = [{ role: 'user', content: agentQuestion }];
    const called: string[] = [];
    let answer = '';
    for (let step = 0; step < 3; step++) {
      const response = await (await post(model, '/responses', { model: 'm', input })).json();
      const output: unknown[] = response.output;
      input.push(...output);
      for (const item of output) {
        if (field(item, 'type') === 'message') answer = text(item, 'content', 0, 'text');
        if (field(item, 'type') !== 'function_call') continue;
        called.push(text(item, 'name'));
        const result = runTool(text(item, 'name'), record(JSON.parse(text(item, 'arguments'))));
        input.push({ type: 'function_call_output', call_id: text(item, 'call_id'), output: result });
      }
    }
    expect(called).toEqual(['get_weather', 'get_weather', 'convert_temperature']);
    expect(answer).toContain('Paris at 18 °C, which is 64.4 °F');
  });

  it('runs agentScript over Messages: tool_use blocks in, tool_result blocks back', async () => {
    model = await startMockModel({ script: agentScript });
    const messages: unknown[] = [{ role: 'user', content: agentQuestion }];
    const called: string[] = [];
    let answer = '';
    for (let step = 0; step < 3; step++) {
      const message = await (await post(model, '/messages', { model: 'm', max_tokens: 1024, messages })).json();
      const content: unknown[] = message.content;
      messages.push({ role: 'assistant', content });
      const results: unknown[] = [];
      for (const block of content) {
        if (field(block, 'type') === 'text') answer = text(block, 'text');
        if (field(block, 'type') !== 'tool_use') continue;
        called.push(text(block, 'name'));
        results.push({ type: 'tool_result', tool_use_id: text(block, 'id'), content: runTool(text(block, 'name'), record(field(block, 'input'))) });
      }
      if (results.length) messages.push({ role: 'user', content: results });
    }
    expect(called).toEqual(['get_weather', 'get_weather', 'convert_temperature']);
    expect(answer).toContain('Paris at 18 °C, which is 64.4 °F');
    expect(field(model.requests[1]?.body, 'messages', 2, 'content', 0, 'type')).toBe('tool_result');
  });
});
