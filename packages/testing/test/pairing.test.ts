/**
 * The scripted model refuses what the real APIs refuse in a conversation: tool results without their calls, calls
 * without their results, and reasoning whose signature (or encrypted content) it did not give, each with the vendor's
 * 400 message; it takes the same conversation sent back whole.
 */
import { describe, expect, it } from 'vitest';
import { mockModels, post } from './helpers.js';

const start = mockModels();
const call = (id: string) => ({ id, name: 'get_weather', arguments: { city: 'Paris' } });

async function errorOf(response: Response): Promise<{ status: number; message: string }> {
  const body = (await response.json()) as { error: { message: string } };
  return { status: response.status, message: body.error.message };
}

describe('Chat Completions', () => {
  const assistant = {
    role: 'assistant',
    content: null,
    tool_calls: ['call_a', 'call_b'].map((id) => ({ id, type: 'function', function: { name: 'get_weather', arguments: '{}' } })),
  };
  const tool = (id: string) => ({ role: 'tool', tool_call_id: id, content: '18C' });
  const user = { role: 'user', content: 'Weather?' };

  it('refuses a tool message that answers no call of the assistant message before it', async () => {
    const model = await start({ script: [{ content: 'unused' }] });
    const response = await post(model, '/chat/completions', { model: 'm', messages: [user, tool('call_a')] });
    expect(await errorOf(response)).toEqual({
      status: 400,
      message: expect.stringContaining("messages with role 'tool' must be a response to a preceeding message with 'tool_calls'"),
    });
  });

  it('refuses calls not each answered right after, and takes them answered in any order', async () => {
    const model = await start({ script: [{ content: 'Done.' }] });
    const missing = await post(model, '/chat/completions', { model: 'm', messages: [user, assistant, tool('call_b'), user] });
    expect(await errorOf(missing)).toEqual({ status: 400, message: expect.stringContaining('did not have response messages: call_a') });
    const paired = await post(model, '/chat/completions', { model: 'm', messages: [user, assistant, tool('call_b'), tool('call_a')] });
    expect(paired.status).toBe(200);
  });
});

describe('Responses', () => {
  it('refuses a function_call_output without its call, and reasoning it did not encrypt', async () => {
    const model = await start({ script: [{ reasoning: 'Think.', toolCalls: [call('call_a')] }, { content: 'Done.' }] });
    const orphan = await post(model, '/responses', {
      model: 'm',
      input: [{ role: 'user', content: 'Weather?' }, { type: 'function_call_output', call_id: 'call_a', output: '18C' }],
    });
    expect(await errorOf(orphan)).toEqual({ status: 400, message: 'No tool call found for function call output with call_id call_a.' });

    const first = await post(model, '/responses', {
      model: 'm',
      store: false,
      include: ['reasoning.encrypted_content'],
      input: 'Weather?',
    });
    const { output } = (await first.json()) as { output: Record<string, unknown>[] };
    const reasoning = output.find((item) => item.type === 'reasoning');
    expect(reasoning?.encrypted_content).toEqual(expect.any(String));
    const next = (encrypted: unknown) =>
      post(model, '/responses', {
        model: 'm',
        store: false,
        input: [
          { role: 'user', content: 'Weather?' },
          { ...reasoning, encrypted_content: encrypted },
          ...output.filter((item) => item.type !== 'reasoning'),
          { type: 'function_call_output', call_id: 'call_a', output: '18C' },
        ],
      });
    expect(await errorOf(await next('gAAAAAforged'))).toEqual({ status: 400, message: expect.stringContaining('could not be verified') });
    expect((await next(reasoning?.encrypted_content)).status).toBe(200);
  });
});

describe('Messages', () => {
  const user = { role: 'user', content: 'Weather?' };
  const results = (...ids: string[]) => ({
    role: 'user',
    content: ids.map((id) => ({ type: 'tool_result', tool_use_id: id, content: '18C' })),
  });

  it('refuses tool results without their tool_use, tool_use without results, and thinking it did not sign', async () => {
    const model = await start({
      script: [{ reasoning: 'Think.', redactedThinking: 'EmwKAhgBEgy', toolCalls: [call('toolu_a'), call('toolu_b')] }, { content: 'Done.' }],
    });
    const first = await post(model, '/messages', { model: 'm', max_tokens: 100, messages: [user] });
    const { content } = (await first.json()) as { content: Record<string, unknown>[] };
    expect(content.map((block) => block.type)).toEqual(['redacted_thinking', 'thinking', 'tool_use', 'tool_use']);
    const send = (assistant: unknown[], answer = results('toolu_a', 'toolu_b')) =>
      post(model, '/messages', {
        model: 'm',
        max_tokens: 100,
        thinking: { type: 'enabled', budget_tokens: 1024 },
        messages: [user, { role: 'assistant', content: assistant }, answer],
      });
    const signed = content[1];
    const uses = content.slice(2);

    expect(await errorOf(await send(content, results('toolu_a')))).toEqual({
      status: 400,
      message: expect.stringContaining('`tool_use` ids were found without `tool_result` blocks immediately after: toolu_b'),
    });
    expect(await errorOf(await send(content, results('toolu_a', 'toolu_b', 'toolu_c')))).toEqual({
      status: 400,
      message: expect.stringContaining('unexpected `tool_use_id` found in `tool_result` blocks: toolu_c'),
    });
    expect(await errorOf(await send([{ ...signed, signature: undefined }, ...uses]))).toEqual({
      status: 400,
      message: 'messages.1.content.0.thinking.signature: Field required',
    });
    expect(await errorOf(await send([{ ...signed, signature: 'Eqforged' }, ...uses]))).toEqual({
      status: 400,
      message: 'messages.1.content.0: Invalid `signature` in `thinking` block',
    });
    expect(await errorOf(await send([{ type: 'redacted_thinking', data: 'forged' }, ...uses]))).toEqual({
      status: 400,
      message: 'messages.1.content.0: Invalid `data` in `redacted_thinking` block',
    });
    expect(await errorOf(await send(uses))).toEqual({
      status: 400,
      message: expect.stringContaining('Expected `thinking` or `redacted_thinking`, but found `tool_use`'),
    });
    expect((await send(content)).status).toBe(200);
  });
});
