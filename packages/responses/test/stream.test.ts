/** ResponseStream against core's one conformance suite for every stream handle, over scripted SSE bytes. */
import { ResponseStream, ResponseStreamListener } from '@ai4ts/responses';
import { parseSse } from '@ai4ts/sse';
import { describeStreamHandle } from '../../core/test/handle-suite.js';
import { Script, textScript, toSse } from './fixtures.js';

/**
 * A handle over `sse` served one event block per macrotask; with `hang`, the body then stays open until aborted.
 * `arrived` resolves once the first normalized event is out.
 */
function scripted(sse: string, hang = false): { handle: ResponseStream; arrived: Promise<void> } {
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
  const handle = new ResponseStream(new ResponseStreamListener(), async (signal) => parseSse(body, { signal }));
  const arrived = new Promise<void>((resolve) => handle.once('content', () => resolve()));
  return { handle, arrived };
}

const failing = new Script().start().message(0, 'msg_1', ['so ', 'far']);
failing.add('error', { code: 'server_error', message: 'Upstream died' });

describeStreamHandle('ResponseStream', {
  ok: () => scripted(toSse(textScript().events)).handle,
  failing: () => scripted(toSse(failing.events)).handle,
  hanging: () => scripted(toSse(new Script().start().message(0, 'msg_1', ['a', 'b']).events.slice(0, -3)), true),
});
