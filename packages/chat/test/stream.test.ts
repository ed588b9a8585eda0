/** ChatStream against core's one conformance suite for every stream handle, over scripted SSE bytes. */
import { ChatStream, ChatStreamListener } from '@ai4ts/chat';
import { parseSse } from '@ai4ts/sse';
import { describeStreamHandle } from '../../core/test/handle-suite.js';
import { chunk, finish, sse } from './helpers.js';

/**
 * A handle over `text` served one event block per macrotask; with `hang`, the body then stays open until aborted.
 * `arrived` resolves once the first content event is out.
 */
function scripted(text: string, hang = false): { handle: ChatStream; arrived: Promise<void> } {
  const blocks = text.split(/(?<=\n\n)/).map((block) => new TextEncoder().encode(block));
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      await new Promise((resolve) => setTimeout(resolve, 1));
      const block = blocks.shift();
      if (block) controller.enqueue(block);
      else if (!hang) controller.close();
      else await new Promise(() => undefined);
    },
  });
  const handle = new ChatStream(new ChatStreamListener(), async (signal) => parseSse(body, { signal }));
  const arrived = new Promise<void>((resolve) => handle.once('content', () => resolve()));
  return { handle, arrived };
}

const OK = `${sse(
  chunk({ role: 'assistant', content: 'Hel' }),
  chunk({ content: 'lo' }),
  finish('stop'),
  { choices: [], usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 } },
)}data: [DONE]\n\n`;
const FAILING = sse(chunk({ content: 'so far' }), { error: { message: 'Upstream died', code: 'server_error' } });

describeStreamHandle('ChatStream', {
  ok: () => scripted(OK).handle,
  failing: () => scripted(FAILING).handle,
  hanging: () => scripted(sse(chunk({ content: 'a' }), chunk({ content: 'b' })), true),
});
