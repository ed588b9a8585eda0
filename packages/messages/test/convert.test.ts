import { describe, expect, it } from 'vitest';
import { sseText } from '@ai4ts/test-kit';
import {
  collectMessage,
  type Message,
  toAssistantTurn,
  toChatCompletion,
  toToolCalls,
  toToolResultTurn,
} from '../src/index.js';
import { toChatUsage, toFinishReason } from '../src/convert.js';
import {
  messageDelta,
  messageStart,
  messageStop,
  textBlock,
  thinkingTextToolStream,
  toolUseBlock,
} from './fixtures.js';

describe('toFinishReason', () => {
  it('maps every stop reason; pause_turn and unknown values pass through', () => {
    const reasons = [
      'end_turn',
      'stop_sequence',
      'max_tokens',
      'tool_use',
      'refusal',
      'pause_turn',
      'model_context_window_exceeded',
    ];
    expect(reasons.map((r) => toFinishReason(r))).toEqual([
      'stop',
      'stop',
      'length',
      'tool_calls',
      'content_filter',
      'pause_turn',
      'model_context_window_exceeded',
    ]);
    expect(toFinishReason(null)).toBeNull();
  });
});

describe('toChatUsage', () => {
  it('counts cached input into prompt_tokens and reports the details given', () => {
    expect(
      toChatUsage({
        input_tokens: 21,
        output_tokens: 393,
        cache_creation_input_tokens: 188086,
        cache_read_input_tokens: 400,
      }),
    ).toEqual({
      prompt_tokens: 188507,
      completion_tokens: 393,
      total_tokens: 188900,
      prompt_tokens_details: { cached_tokens: 400, cache_creation_tokens: 188086 },
    });
    expect(toChatUsage({ input_tokens: 5, output_tokens: 7, cache_read_input_tokens: null })).toEqual({
      prompt_tokens: 5,
      completion_tokens: 7,
      total_tokens: 12,
    });
  });
});

describe('toChatCompletion', () => {
  it('maps text, thinking, tool_use and the stop reason onto the chat shape', async () => {
    const message = await collectMessage(new Response(sseText(thinkingTextToolStream(), { named: true })));
    const chat = toChatCompletion(message);
    expect(chat).toMatchObject({ id: message.id, object: 'chat.completion', model: message.model });
    expect(Number.isInteger(chat.created)).toBe(true);
    expect(chat.choices).toEqual([
      {
        index: 0,
        message: {
          role: 'assistant',
          content: 'Let me check that.',
          reasoning_content: 'The user wants the weather.',
          tool_calls: [
            {
              id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6',
              type: 'function',
              function: {
                name: 'get_weather',
                arguments: JSON.stringify({ location: 'San Francisco, CA "the city"', unit: 'fahrenheit' }),
              },
            },
          ],
          refusal: null,
        },
        finish_reason: 'tool_calls',
        logprobs: null,
      },
    ]);
    expect(chat.usage).toEqual({
      prompt_tokens: 472,
      completion_tokens: 89,
      total_tokens: 561,
      prompt_tokens_details: { cached_tokens: 0, cache_creation_tokens: 0 },
    });
  });

  it('gives invalid tool input as its raw text, null content without text, and leaves server blocks out', async () => {
    const message = await collectMessage(
      new Response(
        sseText([
          messageStart(),
          ...toolUseBlock(0, 'toolu_1', 'f', '{"a": tru'),
          messageDelta('max_tokens'),
          messageStop,
        ], { named: true }),
      ),
    );
    const choice = toChatCompletion(message).choices[0];
    expect(choice.message.content).toBeNull();
    expect(choice.message.reasoning_content).toBeUndefined();
    expect(choice.message.tool_calls?.[0]?.function.arguments).toBe('{"a": tru');
    expect(choice.finish_reason).toBe('length');
    const server: Message = {
      ...message,
      content: [
        { type: 'server_tool_use', id: 's', name: 'web_search', input: {} },
        { type: 'text', text: 'hi' },
      ],
      stop_reason: 'pause_turn',
    };
    const view = toChatCompletion(server).choices[0];
    expect(view.message).toEqual({ role: 'assistant', content: 'hi', refusal: null });
    expect(view.finish_reason).toBe('pause_turn');
  });
});

describe('toAssistantTurn and toToolResultTurn', () => {
  it('sends thinking back unchanged with its signature and strips input_error', async () => {
    const message = await collectMessage(
      new Response(
        sseText([
          ...thinkingTextToolStream().slice(0, -2),
          ...toolUseBlock(3, 'toolu_bad', 'g', '{"x": '),
          messageDelta('tool_use'),
          messageStop,
        ], { named: true }),
      ),
    );
    expect((message.content[3] as { input_error?: unknown }).input_error).toBeDefined();
    const turn = toAssistantTurn(message);
    expect(turn.role).toBe('assistant');
    expect(turn.content).toEqual([
      { type: 'thinking', thinking: 'The user wants the weather.', signature: 'EqQBCkgIARABGAIiQL2' },
      { type: 'text', text: 'Let me check that.' },
      {
        type: 'tool_use',
        id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6',
        name: 'get_weather',
        input: { location: 'San Francisco, CA "the city"', unit: 'fahrenheit' },
      },
      { type: 'tool_use', id: 'toolu_bad', name: 'g', input: {} },
    ]);
    expect((message.content[3] as { input_error?: unknown }).input_error).toBeDefined();
  });

  it('drops empty text blocks, which the API rejects', async () => {
    const message = await collectMessage(
      new Response(
        sseText([
          messageStart(),
          ...textBlock(0),
          ...toolUseBlock(1, 'toolu_1', 'f', '{}'),
          messageDelta('tool_use'),
          messageStop,
        ], { named: true }),
      ),
    );
    expect(toAssistantTurn(message).content).toEqual([{ type: 'tool_use', id: 'toolu_1', name: 'f', input: {} }]);
  });

  it('builds the user turn of tool_result blocks with is_error for failures', () => {
    expect(
      toToolResultTurn([
        { toolCallId: 'toolu_a', content: '15 degrees', isError: false },
        { toolCallId: 'toolu_b', content: '{"error":"Invalid tool input"}', isError: true },
      ]),
    ).toEqual({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'toolu_a', content: '15 degrees' },
        { type: 'tool_result', tool_use_id: 'toolu_b', content: '{"error":"Invalid tool input"}', is_error: true },
      ],
    });
  });

  it('reads the tool calls: JSON of the input, or the raw text when the input was invalid', async () => {
    const message = await collectMessage(
      new Response(
        sseText([
          messageStart(),
          ...toolUseBlock(0, 'toolu_ok', 'get_time', '{"tz": "UTC"}'),
          ...toolUseBlock(1, 'toolu_none', 'ping_host'),
          ...toolUseBlock(2, 'toolu_bad', 'get_weather', '{"city": "Pa'),
          messageDelta('tool_use'),
          messageStop,
        ], { named: true }),
      ),
    );
    expect(toToolCalls(message)).toEqual([
      { id: 'toolu_ok', name: 'get_time', arguments: '{"tz":"UTC"}' },
      { id: 'toolu_none', name: 'ping_host', arguments: '{}' },
      { id: 'toolu_bad', name: 'get_weather', arguments: '{"city": "Pa' },
    ]);
  });
});
