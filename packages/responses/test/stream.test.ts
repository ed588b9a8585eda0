/** ResponsesStream against core's one conformance suite for every stream handle, over scripted SSE bytes. */
import { ResponsesStream, ResponsesStreamListener } from '@ai4ts/responses';
import { describeStreamHandle, dripped, firstContent, sseText } from '@ai4ts/test-kit';
import { Script, textScript } from './fixtures.js';

/** A handle over `sse` served block by block (see `dripped`); `arrived` resolves at the first content event. */
function scripted(sse: string, hang = false): { handle: ResponsesStream; arrived: Promise<void> } {
  const handle = new ResponsesStream(new ResponsesStreamListener(), dripped(sse, hang));
  return { handle, arrived: firstContent(handle) };
}

const failing = new Script().start().message(0, 'msg_1', ['so ', 'far']);
failing.add('error', { code: 'server_error', message: 'Upstream died' });

describeStreamHandle('ResponsesStream', {
  ok: () => scripted(sseText(textScript().events, { named: true })).handle,
  failing: () => scripted(sseText(failing.events, { named: true })).handle,
  hanging: () => scripted(sseText(new Script().start().message(0, 'msg_1', ['a', 'b']).events.slice(0, -3), { named: true }), true),
});
