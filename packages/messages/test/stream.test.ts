/** MessageStream against core's one conformance suite for every stream handle, over scripted SSE bytes. */
import { parseSse } from '@ai4ts/sse';
import { describeStreamHandle } from '../../core/test/handle-suite.js';
import { MessageStream, MessageStreamListener } from '../src/index.js';
import { blockStart, delta, helloStream, messageStart, overloaded, sseText } from './fixtures.js';

/**
 * A handle over `sse` served one event block per macrotask; with `hang`, the body then stays open until aborted.
 * `arrived` resolves once the first content event is out.
 */
function scripted(sse: string, hang = false): { handle: MessageStream; arrived: Promise<void> } {
  const blocks = sse.split(/(?<=\n\n)/).map((block) => new TextEncoder().encode(block));
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      await new Promise((resolve) => setTimeout(resolve, 1));
      const block = blocks.shift();
      if (block) controller.enqueue(block);
      else if (!hang) controller.close();
      else await new Promise(() => undefined);
    },
  });
  const handle = new MessageStream(new MessageStreamListener(), async (signal) => parseSse(body, { signal }));
  const arrived = new Promise<void>((resolve) => handle.once('content', () => resolve()));
  return { handle, arrived };
}

const textSoFar = [
  messageStart(),
  blockStart(0, { type: 'text', text: '' }),
  delta(0, { type: 'text_delta', text: 'so ' }),
  delta(0, { type: 'text_delta', text: 'far' }),
];

describeStreamHandle('MessageStream', {
  ok: () => scripted(sseText(helloStream())).handle,
  failing: () => scripted(sseText([...textSoFar, overloaded()])).handle,
  hanging: () => scripted(sseText(textSoFar), true),
});
