/** ChatStream against core's one conformance suite for every stream handle, over scripted SSE bytes. */
import { ChatStream, ChatStreamListener } from '@ai4ts/chat';
import { describeStreamHandle, dripped, firstContent, sseText } from '@ai4ts/test-kit';
import { chunk, finish } from './helpers.js';

/** A handle over `sse` served block by block (see `dripped`); `arrived` resolves at the first content event. */
function scripted(sse: string, hang = false): { handle: ChatStream; arrived: Promise<void> } {
  const handle = new ChatStream(new ChatStreamListener(), dripped(sse, hang));
  return { handle, arrived: firstContent(handle) };
}

const OK = `${sseText([
  chunk({ role: 'assistant', content: 'Hel' }),
  chunk({ content: 'lo' }),
  finish('stop'),
  { choices: [], usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 } },
])}data: [DONE]\n\n`;
const FAILING = sseText([chunk({ content: 'so far' }), { error: { message: 'Upstream died', code: 'server_error' } }]);

describeStreamHandle('ChatStream', {
  ok: () => scripted(OK).handle,
  failing: () => scripted(FAILING).handle,
  hanging: () => scripted(sseText([chunk({ content: 'a' }), chunk({ content: 'b' })]), true),
});
